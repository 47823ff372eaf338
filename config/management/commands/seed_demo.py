"""``manage.py seed_demo``: demo users for each role, the example published, a sitting with the
demo candidate's exam session, and an invitation link that lands in that exam.

The example is CS201 with a question on the candidate's own project report
(``examples/cs201-own-report.json``, issue #35); the demo candidate's session gets the sample
report (``examples/cs201-own-report.sample-report.md``), uploaded as if by staff, so the
embedded default asks about a passage of it with the offline examiner and no key.

Idempotent: a second run reuses the users, the draft, the published version (publishing an
unchanged document stores nothing new), the sitting, an exam session that is not over yet and a
still-usable invitation to it. Prints the logins.
"""

from __future__ import annotations

import json

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from accounts.models import Invitation, User
from accounts.roles import Role
from accounts.services import candidate_get_or_create, user_create
from authoring.example_packages import EXAMPLES_DIR
from authoring.models import DraftPackage
from authoring.services import draft_create
from ioa.events import TERMINAL_STATES
from lti.selectors import tool_urls
from publishing.models import PublishedVersion
from publishing.services import PublishRejected, version_publish
from sessions.materials import material_upload, materials_missing
from sessions.models import CandidateMaterial, ExamSession, Sitting
from sessions.scheduling import candidate_add, invitation_url, invitations_send, sitting_create

DEMO_STAFF = [
    ("admin", Role.ADMIN, "admin-demo-pass", "Ada Admin"),
    ("author", Role.AUTHOR, "author-demo-pass", "Dr. Avery Author"),
    ("proctor", Role.PROCTOR, "proctor-demo-pass", "Pat Proctor"),
]
DEMO_CANDIDATE = ("candidate@example.test", "Casey Candidate")
DEMO_EXAMPLE = "cs201-own-report"
DEMO_REPORT = "cs201-own-report.sample-report.md"
DEMO_SITTING = "CS201 demo sitting"


class Command(BaseCommand):
    help = (
        "Create (or reuse) the demo users, publish the example package, schedule the demo "
        "candidate's exam and issue an invitation to it."
    )

    @transaction.atomic
    def handle(self, *args: object, **options: object) -> None:
        users: dict[str, User] = {}
        for username, role, password, name in DEMO_STAFF:
            user = User.objects.filter(username=username).first()
            if user is None:
                user = user_create(
                    username=username, role=role, password=password, display_name=name
                )
            users[username] = user
        candidate = candidate_get_or_create(email=DEMO_CANDIDATE[0], display_name=DEMO_CANDIDATE[1])

        document = json.loads((EXAMPLES_DIR / f"{DEMO_EXAMPLE}.json").read_text(encoding="utf-8"))
        title = document["metadata"]["title"]
        draft = DraftPackage.objects.filter(owner=users["author"], title=title).first()
        if draft is None:
            draft = draft_create(owner=users["author"], document=document)
        try:
            outcome = version_publish(draft=draft, user=users["author"])
        except PublishRejected as rejected:
            raise CommandError(f"the demo package was rejected: {rejected}") from rejected

        sitting, session = self._demo_exam(outcome.version, users["proctor"], candidate)
        if materials_missing(session):
            material_upload(
                session=session,
                kind="report",
                filename=DEMO_REPORT,
                data=(EXAMPLES_DIR / DEMO_REPORT).read_bytes(),
                uploaded_by=users["proctor"],
                source=CandidateMaterial.Source.STAFF_BULK,
            )
        invitation = session.invitation
        if invitation is not None and Invitation.objects.usable().filter(pk=invitation.pk).exists():
            link, expires_at = invitation_url(invitation), invitation.expires_at
        else:
            (sent,) = invitations_send(sitting=sitting, user=users["proctor"], sessions=[session])
            link, expires_at = sent.url, sent.expires_at

        out = self.stdout.write
        out("")
        out("Demo ready on " + settings.VIVA_PUBLIC_URL)
        out("  Sign in at " + settings.VIVA_PUBLIC_URL + "/accounts/login/")
        for username, role, password, _ in DEMO_STAFF:
            out(f"    {role.label:<14} username {username:<8} password {password}")
        out(f"  Published: {outcome.version} ({'new' if outcome.created else 'unchanged'})")
        out(f"  Sitting: {sitting.title} (proctor: proctor); exam session {session.pk}")
        out(
            f"  Candidate invitation ({candidate.username}, single use, expires "
            f"{expires_at:%Y-%m-%d %H:%M} UTC):"
        )
        out("    " + link)
        out("  LTI 1.3 tool (register it in Moodle or Canvas: docs/lms.md):")
        for label, url in tool_urls(settings.VIVA_PUBLIC_URL).items():
            out(f"    {label}: {url}")
        out(f"    Custom parameter placing this sitting: viva_sitting={sitting.pk}")
        out("")

    @staticmethod
    def _demo_exam(
        version: PublishedVersion, proctor: User, candidate: User
    ) -> tuple[Sitting, ExamSession]:
        """The demo candidate's exam that is not over yet, in a sitting the demo proctor runs;
        once it is over, a new sitting (a candidate sits a sitting once)."""
        terminal = [state.value for state in TERMINAL_STATES]
        session = (
            ExamSession.objects.filter(
                sitting__version=version,
                sitting__title__startswith=DEMO_SITTING,
                candidate=candidate,
            )
            .exclude(state__in=terminal)
            .select_related("sitting", "invitation")
            .first()
        )
        if session is not None:
            return session.sitting, session
        earlier = Sitting.objects.filter(version=version, title__startswith=DEMO_SITTING).count()
        title = DEMO_SITTING if not earlier else f"{DEMO_SITTING} {earlier + 1}"
        sitting = sitting_create(user=proctor, version=version, title=title)
        session = candidate_add(
            sitting=sitting, email=candidate.email, display_name=candidate.display_name
        )
        return sitting, session
