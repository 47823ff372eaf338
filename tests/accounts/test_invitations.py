"""Candidate invitation links: signed, expiring, single use; refusals say why."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.models import Invitation
from accounts.services import InvitationRefused, invitation_create, invitation_redeem
from tests.factories import CandidateFactory, ProctorFactory


def issue(**kwargs):
    return invitation_create(candidate=CandidateFactory(), created_by=ProctorFactory(), **kwargs)


@pytest.mark.django_db
def test_a_fresh_link_signs_the_candidate_in_once() -> None:
    issued = issue()
    client = Client()
    page = client.get(issued.path)
    assert page.status_code == 200
    assert b"Continue to my exam" in page.content
    assert Invitation.objects.get(pk=issued.invitation.pk).used_at is None  # GET does not use it
    response = client.post(issued.path)
    assert response.status_code == 302
    assert response.url == reverse("exam_sessions:candidate-home")
    assert int(client.session["_auth_user_id"]) == issued.invitation.candidate.pk
    assert Invitation.objects.get(pk=issued.invitation.pk).used_at is not None


@pytest.mark.django_db
@pytest.mark.parametrize("address", ["", "unix:/run/proxy.sock", "::1"])
def test_a_link_redeemed_without_a_client_ip_address_signs_in(address: str) -> None:
    """Behind a Unix-socket proxy the server has no client IP address: the link still works."""
    issued = issue()
    response = Client().post(issued.path, REMOTE_ADDR=address)
    assert response.status_code == 302
    used_from = Invitation.objects.get(pk=issued.invitation.pk).used_from
    assert used_from == ("::1" if address == "::1" else None)


@pytest.mark.django_db
def test_next_path_is_followed_after_sign_in() -> None:
    issued = issue(next_path="/exam/")
    assert Client().post(issued.path).url == "/exam/"


@pytest.mark.django_db
def test_a_reused_link_is_refused_with_a_clear_message() -> None:
    issued = issue()
    Client().post(issued.path)
    second = Client()
    response = second.post(issued.path)
    assert response.status_code == 410
    assert b"already used" in response.content
    assert b"works only once" in response.content
    assert "_auth_user_id" not in second.session


@pytest.mark.django_db
def test_an_expired_link_is_refused_with_a_clear_message() -> None:
    issued = issue()
    Invitation.objects.filter(pk=issued.invitation.pk).update(
        expires_at=timezone.now() - timedelta(minutes=1)
    )
    client = Client()
    response = client.post(issued.path)
    assert response.status_code == 410
    assert b"expired on" in response.content
    assert "_auth_user_id" not in client.session


@pytest.mark.django_db
@pytest.mark.parametrize(
    "tamper",
    [
        lambda t: t[:-1] + ("A" if t[-1] != "A" else "B"),  # signature altered
        lambda t: "x" + t,  # payload altered
        lambda t: t[: len(t) // 2],  # truncated
        lambda t: "not-a-token",
    ],
)
def test_a_tampered_link_is_refused_with_a_clear_message(tamper) -> None:
    issued = issue()
    client = Client()
    response = client.post(reverse("accounts:invitation", kwargs={"token": tamper(issued.token)}))
    assert response.status_code == 400
    assert b"not valid" in response.content
    assert "_auth_user_id" not in client.session
    assert Invitation.objects.get(pk=issued.invitation.pk).used_at is None


@pytest.mark.django_db
def test_a_revoked_link_is_refused() -> None:
    issued = issue()
    Invitation.objects.filter(pk=issued.invitation.pk).update(revoked_at=timezone.now())
    with pytest.raises(InvitationRefused) as refused:
        invitation_redeem(token=issued.token, address=None)
    assert refused.value.reason == "revoked"


@pytest.mark.django_db
def test_invitations_are_only_for_candidates() -> None:
    with pytest.raises(ValueError, match="candidate"):
        invitation_create(candidate=ProctorFactory(), created_by=None)


@pytest.mark.services("postgres")
@pytest.mark.django_db(transaction=True)
def test_two_simultaneous_redemptions_only_one_succeeds() -> None:
    issued = issue()
    barrier = threading.Barrier(4)
    outcomes: list[str] = []

    def redeem() -> None:
        barrier.wait()
        try:
            invitation_redeem(token=issued.token, address="10.0.0.1")
            outcomes.append("ok")
        except InvitationRefused as refused:
            outcomes.append(refused.reason)
        finally:
            connection.close()

    threads = [threading.Thread(target=redeem) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["ok", "used", "used", "used"]
