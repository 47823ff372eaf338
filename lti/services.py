"""LTI 1.3 launches and grade passback (docs/lms.md). Writes; keyword-only.

Launch (after pylti1p3 validated the id token: signature against the platform's JWKS, issuer
and audience of an active registration, expiry, state, nonce, deployment; see ``lti.views``):

* :func:`nonce_use` — an id token's nonce is accepted once (a second launch is a replay);
* :func:`role_for` — LTI roles → our role: Instructor, TeachingAssistant, Administrator,
  ContentDeveloper (context or institution) → ``proctor``; Learner → ``candidate``; a learner
  role wins when both are present (a student must never land in the staff views);
* :func:`link_for` — the resource link's sitting: bound once (the ``viva_sitting`` custom
  parameter, set by Deep Linking or by hand in the LMS), with the AGS endpoints refreshed
  at every launch; a line item is created when the platform allows it and sent none;
* :func:`account_for` — the local account of the platform user in that role (created on first
  launch, no usable password, never an existing local account);
* :func:`enter` — a learner lands in their own exam session of the sitting (created on first
  launch), an instructor in the sitting's proctor overview (and proctors it);
* :func:`deep_link_response` — Deep Linking 2.0: the instructor's chosen published assessment
  becomes a sitting and an ``ltiResourceLink`` content item with ``viva_sitting`` and a line
  item, signed by pylti1p3 for the platform;
* :func:`roster_sync` — at an instructor's launch, Names and Role Provisioning: every active
  learner of the course gets an account and an exam session in the sitting.

Grade passback (:func:`grade_post`): when a session's marks are locked (again, after an
appeal or moderation), the locked, moderated score is posted to the line item for the
candidate's platform user (AGS score service, ``scoreGiven`` out of 100), recorded as a
:class:`~lti.models.GradePassback`.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterable
from typing import Final

from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from lti_tool.models import LtiLaunch, LtiRegistration, LtiUser
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.exception import LtiException
from pylti1p3.grade import Grade
from pylti1p3.lineitem import LineItem
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector

from accounts.models import User
from accounts.roles import Role
from lti.models import GradePassback, LaunchAccount, SittingLink, UsedNonce
from marking.models import SessionMark
from publishing.models import PublishedVersion
from sessions.models import ExamSession, Sitting
from sessions.services import sitting_create

logger = logging.getLogger(__name__)

LIS: Final = "http://purl.imsglobal.org/vocab/lis/v2/"
STAFF_ROLES: Final = ("Instructor", "TeachingAssistant", "Administrator", "ContentDeveloper")
DEEP_LINKING_CLAIM: Final = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
CUSTOM_CLAIM: Final = "https://purl.imsglobal.org/spec/lti/claim/custom"
SCORE_SCOPE: Final = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE: Final = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCORE_MAXIMUM: Final = 100.0


class LaunchRefused(Exception):
    """A launch we will not honour; ``message`` is shown to the person, ``code`` logged."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def nonce_use(*, registration: LtiRegistration, nonce: str) -> None:
    """Record ``nonce`` as used; ``LaunchRefused("replay")`` when it was used before."""
    if not nonce:
        raise LaunchRefused("no_nonce", "The launch carried no nonce.")
    try:
        with transaction.atomic():
            UsedNonce.objects.create(registration=registration, nonce=nonce)
    except IntegrityError:
        raise LaunchRefused(
            "replay", "This launch was already used. Open the exam again from your course."
        ) from None


def role_for(roles: list[str]) -> str:
    """Our role for a launch's LTI roles (module docstring); refused without a known role."""
    names = {role.rsplit("#", 1)[-1] for role in roles if role.startswith(LIS)}
    names |= {role for role in roles if "/" not in role}  # simple names (LTI 1.3 §A.2.4)
    if "Learner" in names:
        return Role.CANDIDATE
    if names & set(STAFF_ROLES):
        return Role.PROCTOR
    raise LaunchRefused("no_role", "Your role in this course cannot open this exam.")


def _ags(lti_launch: LtiLaunch) -> dict[str, object]:
    claim = lti_launch.ags_claim or {}
    return claim if isinstance(claim, dict) else {}


@transaction.atomic
def link_for(*, lti_launch: LtiLaunch) -> SittingLink:
    """The sitting bound to the launch's resource link (module docstring)."""
    resource_link = lti_launch.resource_link
    ags = _ags(lti_launch)
    link = SittingLink.objects.select_for_update().filter(resource_link=resource_link).first()
    if link is None:
        custom = lti_launch.get_claim(CUSTOM_CLAIM) or {}
        sitting_id = str(custom.get("viva_sitting", "")).strip()
        sitting = Sitting.objects.filter(pk=sitting_id).first() if sitting_id else None
        if sitting is None:
            raise LaunchRefused(
                "not_placed",
                "This link is not connected to an exam yet. Ask your instructor to place the "
                "exam in the course again.",
            )
        link = SittingLink(
            resource_link=resource_link, sitting=sitting, registration=lti_launch.registration
        )
    link.ags_lineitems = str(ags.get("lineitems") or link.ags_lineitems)
    link.ags_lineitem = str(ags.get("lineitem") or link.ags_lineitem)
    scope = ags.get("scope")
    link.ags_scopes = list(scope) if isinstance(scope, Iterable) and scope else link.ags_scopes
    nrps = lti_launch.nrps_claim or {}
    link.nrps_memberships = str(nrps.get("context_memberships_url") or link.nrps_memberships)
    link.save()
    return link


def lineitem_ensure(link: SittingLink) -> None:
    """Create the sitting's line item at the platform when it sent none and allows it."""
    if link.ags_lineitem or not link.ags_lineitems or LINEITEM_SCOPE not in link.ags_scopes:
        return
    item = _service(link).find_or_create_lineitem(
        LineItem()
        .set_tag(f"viva-{link.sitting_id}")
        .set_label(link.sitting.title)
        .set_score_maximum(SCORE_MAXIMUM)
        .set_resource_link_id(link.resource_link.id_on_platform)
    )
    lineitem = item.get_id() or ""
    SittingLink.objects.filter(pk=link.pk).update(ags_lineitem=lineitem)
    link.ags_lineitem = lineitem


def account_for(*, lti_launch: LtiLaunch, role: str) -> User:
    """The local account of the launch's platform user in ``role`` (module docstring)."""
    return _account(lti_launch.user, role)


def _account(lti_user: LtiUser, role: str) -> User:
    account = LaunchAccount.objects.select_related("user").filter(lti_user=lti_user, role=role)
    found = account.first()
    if found is not None:
        user = found.user
    else:
        key = f"{lti_user.registration.issuer}\n{lti_user.sub}\n{role}"
        user = User(username="lti-" + hashlib.sha256(key.encode()).hexdigest()[:24], role=role)
        user.set_unusable_password()
    user.display_name = (lti_user.name or f"{lti_user.given_name} {lti_user.family_name}")[:150]
    user.email = lti_user.email or user.email
    user.save()
    if found is None:
        LaunchAccount.objects.create(lti_user=lti_user, role=role, user=user)
    return user


def enter(*, link: SittingLink, user: User) -> str:
    """Where the launched person goes (module docstring)."""
    if user.role == Role.CANDIDATE:
        session, _ = ExamSession.objects.get_or_create(sitting=link.sitting, candidate=user)
        return reverse("exam_sessions:exam-entry", kwargs={"session_id": session.pk})
    link.sitting.proctors.add(user)
    return reverse("exam_sessions:proctor-sitting", args=[link.sitting_id])


def roster_sync(*, link: SittingLink) -> list[ExamSession]:
    """Names and Role Provisioning: every active learner of the course gets their account and
    exam session in the link's sitting now (so proctors see the whole roster before anyone
    launches; a learner's later launch finds the same session). Nobody is removed: a learner
    who left the course keeps their session and its record. Returns the sessions created."""
    if not link.nrps_memberships:
        return []
    service = NamesRolesProvisioningService(
        ServiceConnector(link.registration.to_registration()),
        {"context_memberships_url": link.nrps_memberships},
    )
    created: list[ExamSession] = []
    for member in service.get_members():
        if member.get("status", "Active") != "Active":
            continue
        try:
            role = role_for(list(member.get("roles") or []))
        except LaunchRefused:
            continue
        if role != Role.CANDIDATE or not member.get("user_id"):
            continue
        lti_user, _ = LtiUser.objects.get_or_create(
            registration=link.registration, sub=str(member["user_id"])
        )
        lti_user.name = str(member.get("name") or lti_user.name)[:500]
        lti_user.email = str(member.get("email") or lti_user.email)
        lti_user.save()
        user = _account(lti_user, role)
        session, made = ExamSession.objects.get_or_create(sitting=link.sitting, candidate=user)
        if made:
            created.append(session)
    SittingLink.objects.filter(pk=link.pk).update(roster_synced_at=timezone.now())
    logger.info("roster of %s synced: %s new candidates", link, len(created))
    return created


def placeable_versions(*, user: object) -> list[PublishedVersion]:
    """Published assessments ``user`` may place in a course (those they may schedule)."""
    return list(PublishedVersion.objects.visible_to(user).order_by("-published_at")[:200])


def deep_link_response(
    *, lti_launch: LtiLaunch, user: User, version: PublishedVersion, title: str, launch_url: str
) -> dict[str, str]:
    """Place ``version`` in the course: a new sitting (``user`` proctors it) and the signed
    Deep Linking response (pylti1p3) naming it: ``{"return_url", "jwt", "title"}``."""
    sitting = sitting_create(user=user, version=version, title=title)
    resource = (
        DeepLinkResource()
        .set_url(launch_url)
        .set_title(sitting.title)
        .set_custom_params({"viva_sitting": str(sitting.pk)})
        .set_lineitem(
            LineItem()
            .set_tag(f"viva-{sitting.pk}")
            .set_label(sitting.title)
            .set_score_maximum(SCORE_MAXIMUM)
        )
    )
    deep_link = lti_launch.get_message_launch().get_deep_link()
    settings_claim = lti_launch.get_launch_data().get(DEEP_LINKING_CLAIM) or {}
    logger.info("deep link: sitting %s of %s placed by %s", sitting.pk, version.pk, user.pk)
    return {
        "return_url": str(settings_claim.get("deep_link_return_url", "")),
        "jwt": deep_link.get_response_jwt([resource]),
        "title": sitting.title,
    }


def _service(link: SittingLink) -> AssignmentsGradesService:
    registration = link.registration.to_registration()
    data = {
        "scope": link.ags_scopes,
        "lineitems": link.ags_lineitems,
        "lineitem": link.ags_lineitem or None,
    }
    return AssignmentsGradesService(ServiceConnector(registration), data)  # type: ignore[arg-type]


def grade_post(*, session_id: uuid.UUID | str) -> GradePassback | None:
    """Post the session's locked marks to the platform (module docstring). ``None`` when
    there is nothing to post (no LTI link with the score scope, no platform user, not
    locked)."""
    session = ExamSession.objects.select_related("sitting", "candidate").get(pk=session_id)
    if session.is_preview:  # never counts (sessions.previews)
        return None
    mark = SessionMark.objects.filter(session=session, locked_at__isnull=False).first()
    link = (
        SittingLink.objects.filter(sitting=session.sitting)
        .select_related("registration", "resource_link")
        .first()
    )
    account = LaunchAccount.objects.filter(user=session.candidate).select_related("lti_user")
    found = account.first()
    if mark is None or link is None or found is None or SCORE_SCOPE not in link.ags_scopes:
        return None
    score = round(float(mark.final_score) * SCORE_MAXIMUM, 2)
    grade = (
        Grade()
        .set_score_given(score)
        .set_score_maximum(SCORE_MAXIMUM)
        .set_timestamp(timezone.now().isoformat())
        .set_activity_progress("Completed")
        .set_grading_progress("FullyGraded")
        .set_user_id(found.lti_user.sub)
    )
    try:
        lineitem_ensure(link)
        _service(link).put_grade(grade)
    except (LtiException, OSError, ValueError) as error:
        logger.warning("grade passback of session %s failed: %s", session.pk, error)
        return GradePassback.objects.create(
            session=session,
            link=link,
            cycle=mark.cycle,
            score=score,
            status=GradePassback.Status.FAILED,
            detail=str(error)[:2000],
        )
    logger.info("grade passback of session %s: %s/100 (cycle %s)", session.pk, score, mark.cycle)
    return GradePassback.objects.create(
        session=session, link=link, cycle=mark.cycle, score=score, status="posted"
    )
