"""API tokens: issued, listed and revoked from the web UI; only a digest is stored; a user manages
their own tokens and an admin may revoke any (docs/permissions.md)."""

from __future__ import annotations

import hashlib
import re

import pytest
from django.test import Client

from accounts.models import ApiToken
from accounts.services import ApiTokenRefused, api_token_issue, api_token_revoke
from tests.factories import AdminFactory, AuthorFactory, CandidateFactory, ProctorFactory

pytestmark = pytest.mark.django_db


def api_get(key: str, path: str = "/api/v1/me/") -> int:
    return Client().get(path, HTTP_AUTHORIZATION=f"Token {key}").status_code


def signed_in(user: object) -> Client:
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return client


def test_an_issued_key_authenticates_and_only_its_digest_is_stored() -> None:
    author = AuthorFactory()
    issued = api_token_issue(user=author, name="  gradebook sync ")
    row = ApiToken.objects.get(pk=issued.token.pk)
    assert row.name == "gradebook sync"
    assert issued.key.startswith("viva_") and len(issued.key) == 48
    assert row.key_hash == hashlib.sha256(issued.key.encode()).hexdigest()
    assert row.prefix == issued.key[:12]
    stored = " ".join(str(v) for v in ApiToken.objects.filter(pk=row.pk).values().first().values())
    assert issued.key not in stored
    assert row.last_used_at is None
    assert api_get(issued.key) == 200
    row.refresh_from_db()
    assert row.last_used_at is not None


def test_a_revoked_unknown_or_inactive_users_key_is_refused_with_401() -> None:
    author = AuthorFactory()
    kept, revoked = (api_token_issue(user=author, name=n) for n in ("kept", "revoked"))
    api_token_revoke(token=revoked.token, by=author)
    assert api_get(revoked.key) == 401
    assert api_get(kept.key) == 200
    assert api_get(kept.key[:-1] + ("A" if kept.key[-1] != "A" else "B")) == 401
    author.is_active = False
    author.save()
    assert api_get(kept.key) == 401


def test_revoking_twice_keeps_the_first_revocation() -> None:
    author, admin = AuthorFactory(), AdminFactory()
    issued = api_token_issue(user=author, name="ci")
    first = api_token_revoke(token=issued.token, by=author)
    second = api_token_revoke(token=issued.token, by=admin)
    assert second.revoked_at == first.revoked_at and second.revoked_by == author


@pytest.mark.parametrize(("name", "code"), [("", "name"), ("   ", "name"), ("x" * 101, "name")])
def test_a_token_needs_a_name(name: str, code: str) -> None:
    with pytest.raises(ApiTokenRefused) as refused:
        api_token_issue(user=AuthorFactory(), name=name)
    assert refused.value.code == code
    assert ApiToken.objects.count() == 0


def test_candidates_get_no_token_and_a_user_holds_at_most_twenty() -> None:
    with pytest.raises(ApiTokenRefused) as refused:
        api_token_issue(user=CandidateFactory(), name="mine")
    assert refused.value.code == "candidate"
    proctor = ProctorFactory()
    for n in range(20):
        api_token_issue(user=proctor, name=f"t{n}")
    with pytest.raises(ApiTokenRefused) as refused:
        api_token_issue(user=proctor, name="one more")
    assert refused.value.code == "too_many"
    api_token_revoke(token=ApiToken.objects.filter(user=proctor).first(), by=proctor)  # type: ignore[arg-type]
    api_token_issue(user=proctor, name="after revoking one")


def test_the_page_issues_a_key_shown_once_then_lists_it_by_prefix() -> None:
    author = AuthorFactory()
    client = signed_in(author)
    response = client.post("/accounts/tokens/", {"name": "LMS export"})
    assert response.status_code == 200
    assert "no-store" in response["Cache-Control"]
    html = response.content.decode()
    key = re.search(r'id="issued-key" value="(viva_[^"]+)"', html).group(1)  # type: ignore[union-attr]
    assert api_get(key) == 200
    listing = client.get("/accounts/tokens/").content.decode()
    assert "LMS export" in listing and key[:12] in listing
    assert key not in listing


def test_a_refused_name_is_explained_beside_the_field_with_400() -> None:
    response = signed_in(AuthorFactory()).post("/accounts/tokens/", {"name": " "})
    assert response.status_code == 400
    assert 'role="alert"' in response.content.decode()
    assert ApiToken.objects.count() == 0


def test_users_see_and_revoke_only_their_own_tokens_and_admins_any() -> None:
    alice, bob, admin = AuthorFactory(), ProctorFactory(), AdminFactory()
    alices = api_token_issue(user=alice, name="alice's key")
    bobs = api_token_issue(user=bob, name="bob's key")
    assert "alice's key" not in signed_in(bob).get("/accounts/tokens/").content.decode()
    response = signed_in(bob).post(f"/accounts/tokens/{alices.token.pk}/revoke/")
    assert response.status_code == 404
    assert api_get(alices.key) == 200
    assert signed_in(bob).post(f"/accounts/tokens/{bobs.token.pk}/revoke/").status_code == 302
    assert api_get(bobs.key) == 401
    admin_page = signed_in(admin).get("/accounts/tokens/").content.decode()
    assert "alice&#x27;s key" in admin_page and "bob&#x27;s key" in admin_page
    assert signed_in(admin).post(f"/accounts/tokens/{alices.token.pk}/revoke/").status_code == 302
    assert api_get(alices.key) == 401
    assert ApiToken.objects.get(pk=alices.token.pk).revoked_by == admin


def test_candidates_and_anonymous_visitors_cannot_open_the_page() -> None:
    assert signed_in(CandidateFactory()).get("/accounts/tokens/").status_code == 403
    assert signed_in(CandidateFactory()).post("/accounts/tokens/", {"name": "x"}).status_code == 403
    anonymous = Client().get("/accounts/tokens/")
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert ApiToken.objects.count() == 0


def test_revoking_needs_a_post() -> None:
    author = AuthorFactory()
    issued = api_token_issue(user=author, name="k")
    assert signed_in(author).get(f"/accounts/tokens/{issued.token.pk}/revoke/").status_code == 405
    assert api_get(issued.key) == 200


def test_the_same_form_sent_twice_issues_one_token() -> None:
    author = AuthorFactory()
    client = signed_in(author)
    form = client.get("/accounts/tokens/").content.decode()
    request_key = re.search(r'name="request_key" value="([0-9a-f-]{36})"', form).group(1)  # type: ignore[union-attr]
    first = client.post("/accounts/tokens/", {"name": "sync", "request_key": request_key})
    again = client.post("/accounts/tokens/", {"name": "sync", "request_key": request_key})
    assert first.status_code == 200 and 'id="issued-key"' in first.content.decode()
    assert again.status_code == 409
    assert 'id="issued-key"' not in again.content.decode()
    assert "already sent" in again.content.decode()
    assert ApiToken.objects.filter(user=author).count() == 1
    fresh = re.search(r'name="request_key" value="([0-9a-f-]{36})"', again.content.decode())
    assert fresh is not None and fresh.group(1) != request_key
