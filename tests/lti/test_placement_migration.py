"""Migration ``lti.0003_placements`` on links bound before placements were recorded: each
(sitting, course) a link binds becomes a placement, each LTI candidate's session is reached
through the first link of their own LMS (so their grade still has a course to go to)."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from lti_tool.models import LtiContext, LtiDeployment, LtiRegistration, LtiResourceLink, LtiUser

from publishing.services import version_publish
from sessions.models import ExamSession, Sitting
from tests.factories import AuthorFactory, CandidateFactory, DraftPackageFactory

pytestmark = pytest.mark.django_db(transaction=True)

BEFORE = [("lti", "0002_roster_sync")]
AFTER = [("lti", "0003_placements")]


def migrate(targets: list[tuple[str, str]]) -> Any:
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


def test_existing_links_become_placements_and_candidates_keep_their_course() -> None:
    author = AuthorFactory()
    version = version_publish(draft=DraftPackageFactory(owner=author), user=author).version
    sitting = Sitting.objects.create(version=version, title="Old", created_by=author)
    candidate = CandidateFactory()
    session = ExamSession.objects.create(sitting=sitting, candidate=candidate)
    registration = LtiRegistration.objects.create(
        name="Old LMS", issuer="https://lms.example", client_id="c"
    )
    deployment = LtiDeployment.objects.create(
        registration=registration, deployment_id="d", is_active=True
    )
    lti_user = LtiUser.objects.create(registration=registration, sub="s1")
    resources = [
        LtiResourceLink.objects.create(
            context=LtiContext.objects.create(deployment=deployment, id_on_platform=course),
            id_on_platform=f"r-{course}",
        )
        for course in ("c1", "c2")
    ]
    apps = migrate(BEFORE)
    try:
        old_link = apps.get_model("lti", "SittingLink")
        links = [
            old_link.objects.create(
                resource_link_id=r.pk, sitting_id=sitting.pk, registration_id=registration.pk
            )
            for r in resources
        ]
        apps.get_model("lti", "LaunchAccount").objects.create(
            lti_user_id=lti_user.pk, role="candidate", user_id=candidate.pk
        )
        apps = migrate(AFTER)
        placements = apps.get_model("lti", "Placement").objects.filter(sitting_id=sitting.pk)
        assert sorted(placements.values_list("context__id_on_platform", "how")) == [
            ("c1", "migrated"),
            ("c2", "migrated"),
        ]
        assert not apps.get_model("lti", "SittingLink").objects.filter(placement=None).exists()
        (reached,) = apps.get_model("lti", "CandidateLink").objects.filter(session_id=session.pk)
        assert reached.link_id == links[0].pk
    finally:
        migrate(MigrationExecutor(connection).loader.graph.leaf_nodes())
