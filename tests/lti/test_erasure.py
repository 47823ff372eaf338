"""Erasing a candidate who came through an LMS (docs/privacy.md, lti/erasure.py): the platform's
record of the person that django-lti keeps (``lti_tool.LtiUser``: name, email, picture) is
cleared with the account, for a learner who launched and for one only read from the course's
roster; the opaque ``sub`` stays, so a later launch still finds the pseudonymised account."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.test import Client
from lti_tool.models import LtiRegistration, LtiUser

from lti.models import LaunchAccount
from sessions.erasure import erase_candidate
from sessions.models import Sitting
from tests.factories import CandidateFactory, ProctorFactory
from tests.lti.test_platform_launches import launch, platform, platform_base, sitting

__all__ = ["platform", "platform_base", "sitting"]

pytestmark = pytest.mark.django_db(transaction=True)


def test_erasure_clears_the_lms_record_of_a_launched_and_a_rostered_learner(
    platform: dict[str, Any], sitting: Sitting, client: Client
) -> None:
    custom = {"viva_sitting": str(sitting.pk)}
    assert (
        launch(client, platform["base"], user="ines", role="Instructor", custom=custom)[
            0
        ].status_code
        == 302
    )  # reads the roster: Alice and Bob
    client.logout()
    assert launch(client, platform["base"], user="alice", role="Learner")[0].status_code == 302
    for sub in ("alice", "bob"):  # Alice launched; Bob is only on the roster
        account = LaunchAccount.objects.get(lti_user__sub=sub, role="candidate")
        before = LtiUser.objects.get(sub=sub)
        assert before.name and before.email
        erase_candidate(candidate=account.user, requested_by=None, reason="GDPR art. 17")
        after = LtiUser.objects.get(sub=sub)
        assert (after.name, after.given_name, after.family_name, after.email) == ("", "", "", "")
        assert after.picture_url == ""
    # Alice launches again: the same (pseudonymised) account, the platform's data again.
    client.logout()
    alice = LaunchAccount.objects.get(lti_user__sub="alice", role="candidate").user
    assert launch(client, platform["base"], user="alice", role="Learner")[0].status_code == 302
    assert LaunchAccount.objects.get(lti_user__sub="alice", role="candidate").user == alice


def test_the_migration_links_candidates_made_before_it() -> None:
    """``lti.0004_candidate_auth_user``: a candidate account made before it (linked through
    its ``LaunchAccount`` only) becomes its platform user's ``auth_user``; a staff account
    does not."""
    registration = LtiRegistration.objects.create(
        name="LMS", issuer="https://l.example", client_id="c"
    )
    learner, teacher = (LtiUser.objects.create(registration=registration, sub=s) for s in "lt")
    candidate, proctor = CandidateFactory(), ProctorFactory()
    LaunchAccount.objects.create(lti_user=learner, role="candidate", user=candidate)
    LaunchAccount.objects.create(lti_user=teacher, role="proctor", user=proctor)
    executor = MigrationExecutor(connection)
    executor.migrate([("lti", "0003_placements")])
    executor.loader.build_graph()
    executor.migrate([("lti", "0004_candidate_auth_user")])
    learner.refresh_from_db()
    teacher.refresh_from_db()
    assert learner.auth_user_id == candidate.pk and teacher.auth_user_id is None
