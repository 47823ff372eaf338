"""LTI 1.3 launches and grade passback (docs/lms.md). Writes; keyword-only.

Launch (after pylti1p3 validated the id token: signature against the platform's JWKS, issuer
and audience of an active registration, expiry, state, nonce, deployment; see ``lti.views``):

* :func:`nonce_use` — an id token's nonce is accepted once (a second launch is a replay);
* :func:`role_for` — LTI roles → our role: Instructor, TeachingAssistant, Administrator,
  ContentDeveloper (context or institution) → ``proctor``; Learner → ``candidate``; a learner
  role wins when both are present (a student must never land in the staff views);
* :func:`link_for` — the resource link's sitting: bound once (the ``viva_sitting`` custom
  parameter, set by Deep Linking or by hand in the LMS) and only to a sitting placed in the
  launch's own course (Tenancy, below), with the AGS endpoints refreshed at every launch; a
  line item is created when the platform allows it and sent none;
* :func:`account_for` — the local account of the platform user in that role (created on first
  launch, no usable password, never an existing local account; one per registration, so an
  LMS registered twice under one issuer, with two client ids, has accounts of its own in each);
* :func:`enter` — a learner lands in their own exam session of the sitting (created on first
  launch; the link is remembered as their course, where their grade goes), an instructor in
  the sitting's proctor overview (and proctors it);
* :func:`deep_link_response` — Deep Linking 2.0: the instructor's chosen published assessment
  becomes a sitting (or an exam they run in another course is chosen), placed in the course,
  and an ``ltiResourceLink`` content item with ``viva_sitting`` and a line item, signed by
  pylti1p3 for the platform;
* :func:`review_target` — ``LtiSubmissionReviewRequest``: the reviewed candidate's result
  (their own, for a learner) or session (staff);
* :func:`roster_sync` — at an instructor's launch, Names and Role Provisioning: every active
  learner of the course gets an account and an exam session in the sitting.

Tenancy: a sitting belongs to the courses it was placed in (:class:`~lti.models.Placement`:
registration, deployment and context), recorded when Deep Linking creates the link
(:func:`deep_link_response`), or by the first launch naming a sitting placed nowhere yet;
a launch from any other course never binds to it (:class:`PlacedElsewhere`: a learner is
refused, an instructor may make a copy for their course, or place it there too when they
already run it: :func:`placement_make`).

Grade sync (``lti.grades``: :func:`grade_post`, :func:`lineitem_ensure`, re-exported here):
``PendingManual`` without a score at lock, the score and the released feedback at release,
to each candidate's own course line item, refused posts retried with back-off.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Iterable, Mapping
from typing import Any, Final

from django.db import IntegrityError, transaction
from django.urls import reverse
from django.utils import timezone
from lti_tool.models import LtiContext, LtiLaunch, LtiRegistration, LtiUser
from pylti1p3.deep_link_resource import DeepLinkResource
from pylti1p3.lineitem import LineItem
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.service_connector import ServiceConnector

from accounts.models import Requester, User
from accounts.roles import Role
from lti import claims
from lti.grades import grade_post, lineitem_ensure
from lti.models import CandidateLink, LaunchAccount, Placement, SittingLink, UsedNonce
from lti.selectors import SCORE_MAXIMUM, placeable_sittings
from publishing.models import PublishedVersion
from sessions.models import ExamSession, Sitting
from sessions.practice import session_for_candidate
from sessions.services import sitting_create

logger = logging.getLogger(__name__)

LIS: Final = "http://purl.imsglobal.org/vocab/lis/v2/"
STAFF_ROLES: Final = ("Instructor", "TeachingAssistant", "Administrator", "ContentDeveloper")
DEEP_LINKING_CLAIM: Final = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
CUSTOM_CLAIM: Final = "https://purl.imsglobal.org/spec/lti/claim/custom"
FOR_USER_CLAIM: Final = "https://purl.imsglobal.org/spec/lti/claim/for_user"


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


class PlacedElsewhere(LaunchRefused):
    """The link names a sitting placed in another course or LMS: it never binds here. Staff
    are offered a copy of the sitting for their course, or, when they already proctor it, to
    place it here too (``lti.placement_views``); a learner is told to ask their instructor."""

    def __init__(self, *, sitting: Sitting, staff: bool) -> None:
        message = (
            "This exam was placed in another course. Make a copy of it for this course, or "
            "place an exam with your course's content selection (Deep Linking)."
            if staff
            else "This exam belongs to another course. Ask your instructor to place the exam "
            "in this course."
        )
        super().__init__("placed_elsewhere", message)
        self.sitting = sitting
        self.staff = staff


def _named_sitting(lti_launch: LtiLaunch) -> Sitting:
    """The sitting the link's ``viva_sitting`` custom parameter names (not a preview)."""
    custom = lti_launch.get_claim(CUSTOM_CLAIM) or {}
    sitting_id = str(custom.get("viva_sitting", "") if isinstance(custom, dict) else "").strip()
    try:
        sitting = Sitting.objects.filter(pk=uuid.UUID(sitting_id), is_preview=False).first()
    except ValueError:
        sitting = None
    if sitting is None:
        raise LaunchRefused(
            "not_placed",
            "This link is not connected to an exam yet. Ask your instructor to place the "
            "exam in the course again.",
        )
    return sitting


def _placement(*, sitting: Sitting, context: LtiContext, staff: bool) -> Placement:
    """The sitting's placement in ``context``: recorded (Deep Linking, a copy, an added
    course), or claimed now by the first launch when the sitting was never placed anywhere.
    Anything else is another course's sitting (:class:`PlacedElsewhere`)."""
    Sitting.objects.select_for_update().filter(pk=sitting.pk).first()  # one claim at a time
    placements = Placement.objects.filter(sitting=sitting)
    found = placements.filter(context=context).first()
    if found is not None:
        return found
    unset = placements.filter(context__deployment=context.deployment, context__id_on_platform="")
    adopted = unset.first() if context.id_on_platform else None
    if adopted is not None:  # placed by a Deep Linking request that named no course
        adopted.context = context
        adopted.save(update_fields=["context"])
        return adopted
    if not placements.exists():
        return Placement.objects.create(
            sitting=sitting, context=context, how=Placement.How.FIRST_LAUNCH
        )
    raise PlacedElsewhere(sitting=sitting, staff=staff)


def _services_refresh(link: SittingLink, lti_launch: LtiLaunch) -> None:
    """The AGS and NRPS endpoints the launch sent for the link (kept when it sent none)."""
    ags = _ags(lti_launch)
    link.ags_lineitems = str(ags.get("lineitems") or link.ags_lineitems)
    link.ags_lineitem = str(ags.get("lineitem") or link.ags_lineitem)
    scope = ags.get("scope")
    link.ags_scopes = list(scope) if isinstance(scope, Iterable) and scope else link.ags_scopes
    nrps = lti_launch.nrps_claim or {}
    link.nrps_memberships = str(nrps.get("context_memberships_url") or link.nrps_memberships)


@transaction.atomic
def link_for(*, lti_launch: LtiLaunch) -> SittingLink:
    """The sitting bound to the launch's resource link (module docstring). A new link binds
    only to a sitting placed in the launch's own course (registration, deployment and
    context); :class:`PlacedElsewhere` otherwise."""
    resource_link = lti_launch.resource_link
    link = SittingLink.objects.select_for_update().filter(resource_link=resource_link).first()
    if link is None:
        sitting = _named_sitting(lti_launch)
        staff = role_for(list(lti_launch.roles_claim or [])) != Role.CANDIDATE
        placement = _placement(sitting=sitting, context=resource_link.context, staff=staff)
        # The sitting's lock is held now: a launch of the same link that got here first has
        # committed its binding (a class opening a new link together), so look again.
        link = SittingLink.objects.filter(resource_link=resource_link).first() or SittingLink(
            resource_link=resource_link,
            sitting=sitting,
            placement=placement,
            registration=lti_launch.registration,
        )
    _services_refresh(link, lti_launch)
    link.save()
    return link


@transaction.atomic
def placement_make(*, lti_launch: LtiLaunch, user: User, same: bool) -> SittingLink:
    """An instructor's answer to :class:`PlacedElsewhere` for their course's link: a copy of
    the named sitting (same assessment, title and start rule; a sitting of its own, with its
    own roster and grades) placed in their course, or, with ``same`` and only when ``user``
    already proctors the sitting (they placed it in another of their courses), the same
    sitting placed in this course too (each student's grade still goes to their own
    course's line item). Binds the launch's resource link to it."""
    if role_for(list(lti_launch.roles_claim or [])) == Role.CANDIDATE:
        raise LaunchRefused("not_staff", "Only instructors can place an exam in a course.")
    resource_link = lti_launch.resource_link
    link = SittingLink.objects.select_for_update().filter(resource_link=resource_link).first()
    if link is not None:
        return link
    original = _named_sitting(lti_launch)
    context = resource_link.context
    if same:
        if not original.proctors.filter(pk=user.pk).exists():
            raise LaunchRefused(
                "not_proctor", "Only an instructor of this exam can place it in another course."
            )
        placement, _ = Placement.objects.get_or_create(
            sitting=original, context=context, defaults={"how": Placement.How.ADDED}
        )
        placement.placed_by = placement.placed_by or user
        placement.save(update_fields=["placed_by"])
    else:
        copy = sitting_create(
            user=user,
            version=original.version,
            title=original.title,
            proctor_authorises_start=original.proctor_authorises_start,
        )
        placement = Placement.objects.create(
            sitting=copy,
            context=context,
            how=Placement.How.COPY,
            placed_by=user,
            copied_from=original,
        )
    link = SittingLink(
        resource_link=resource_link,
        sitting=placement.sitting,
        placement=placement,
        registration=lti_launch.registration,
    )
    _services_refresh(link, lti_launch)
    link.save()
    logger.info(
        "LTI placement of %s in %s (%s) by %s", link.sitting_id, context, placement.how, user.pk
    )
    return link


def account_for(*, lti_launch: LtiLaunch, role: str) -> User:
    """The local account of the launch's platform user in ``role`` (module docstring)."""
    return _account(lti_launch.user, role)


def _account(lti_user: LtiUser, role: str) -> User:
    """The platform user's account in ``role``: found through its :class:`LaunchAccount`, else
    created as ``lti-<digest of the registration, the user's sub and the role>`` (the
    registration, not its issuer: two registrations of one issuer share sub values). A
    candidate account is also django-lti's ``LtiUser.auth_user``: the erasure of the account
    clears the platform's record of the person through it (``sessions.erasure``)."""
    account = LaunchAccount.objects.select_related("user").filter(lti_user=lti_user, role=role)
    found = account.first()
    if found is not None:
        user = found.user
    else:
        key = f"{lti_user.registration.uuid}\n{lti_user.sub}\n{role}"
        user = User(username="lti-" + hashlib.sha256(key.encode()).hexdigest()[:24], role=role)
        user.set_unusable_password()
    user.display_name = (lti_user.name or f"{lti_user.given_name} {lti_user.family_name}")[:150]
    user.email = lti_user.email or user.email
    user.save()
    if found is None:
        LaunchAccount.objects.create(lti_user=lti_user, role=role, user=user)
    if role == Role.CANDIDATE and lti_user.auth_user_id != user.pk:
        LtiUser.objects.filter(pk=lti_user.pk).update(auth_user=user)
    return user


def _candidate_link(session: ExamSession, link: SittingLink) -> None:
    """Remember that the candidate reached ``session`` through ``link`` (their course)."""
    CandidateLink.objects.update_or_create(
        session=session, link=link, defaults={"seen_at": timezone.now()}
    )


def enter(*, link: SittingLink, user: User) -> str:
    """Where the launched person goes (module docstring)."""
    if user.role == Role.CANDIDATE:
        session, _ = session_for_candidate(sitting=link.sitting, candidate=user)
        _candidate_link(session, link)
        return reverse("exam_sessions:exam-entry", kwargs={"session_id": session.pk})
    link.sitting.proctors.add(user)
    return reverse("exam_sessions:proctor-sitting", args=[link.sitting_id])


def review_target(*, lti_launch: LtiLaunch, user: User) -> str:
    """``LtiSubmissionReviewRequest`` (the gradebook's "view submission"): where the reviewed
    candidate's session (``for_user``) of the link's sitting opens. The link must already be
    bound in this course (found by its resource link, or by the line item reviewed); a learner
    may review only their own submission and lands on their result page (what the release
    lets them see); staff land on the session's proctor page (and proctor the sitting, as at
    an instructor's launch of the link)."""
    link = _reviewed_link(lti_launch)
    for_user = lti_launch.get_claim(FOR_USER_CLAIM) or {}
    sub = str(for_user.get("user_id", "")) if isinstance(for_user, dict) else ""
    if user.role == Role.CANDIDATE and sub != lti_launch.user.sub:
        raise LaunchRefused("not_yours", "You can only review your own submission.")
    account = LaunchAccount.objects.filter(
        lti_user__registration=lti_launch.registration, lti_user__sub=sub, role=Role.CANDIDATE
    ).first()
    session = (
        ExamSession.objects.filter(sitting=link.sitting, candidate_id=account.user_id).first()
        if account is not None
        else None
    )
    if session is None:
        raise LaunchRefused("no_submission", "There is no exam session to review for this person.")
    if user.role == Role.CANDIDATE:
        return reverse("results:result", kwargs={"session_id": session.pk})
    enter(link=link, user=user)
    return reverse("exam_sessions:proctor-session", kwargs={"session_id": session.pk})


def _reviewed_link(lti_launch: LtiLaunch) -> SittingLink:
    """The bound link a submission review names: its resource link, else its line item in
    the launch's course. Never binds a new link (a review is not a placement)."""
    links = SittingLink.objects.select_related("sitting").filter(
        registration=lti_launch.registration
    )
    found = None
    if lti_launch.resource_link_claim:
        found = links.filter(resource_link=lti_launch.resource_link).first()
    lineitem = str(_ags(lti_launch).get("lineitem") or "")
    if found is None and lineitem:
        context = lti_launch.context
        found = links.filter(ags_lineitem=lineitem, resource_link__context=context).first()
    if found is None:
        raise LaunchRefused(
            "not_placed",
            "This link is not connected to an exam yet. Ask your instructor to place the "
            "exam in the course again.",
        )
    return found


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
        if member.get("status", "Active") != "Active" or not _bounded(member):
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
        session, made = session_for_candidate(sitting=link.sitting, candidate=user)
        _candidate_link(session, link)
        if made:
            created.append(session)
    SittingLink.objects.filter(pk=link.pk).update(roster_synced_at=timezone.now())
    logger.info("roster of %s synced: %s new candidates", link, len(created))
    return created


def _bounded(member: Mapping[str, Any]) -> bool:
    """A roster member's values bounded to their columns (``lti.claims``); False (skipped,
    logged) when its user id is too long to store."""
    try:
        claims.bound(member)  # type: ignore[arg-type]  # pylti1p3's TMember: a dict
    except claims.TooLong as error:
        logger.warning("roster member skipped: %s", error)
        return False
    return True


def placeable_versions(*, user: Requester) -> list[PublishedVersion]:
    """Published assessments ``user`` may place in a course (those they may schedule)."""
    return list(PublishedVersion.objects.visible_to(user).order_by("-published_at")[:200])


@transaction.atomic
def deep_link_response(
    *,
    lti_launch: LtiLaunch,
    user: User,
    version: PublishedVersion | None,
    title: str,
    launch_url: str,
    sitting: Sitting | None = None,
) -> dict[str, str]:
    """Place ``version`` in the course: a new sitting (``user`` proctors it), or ``sitting``
    (one of :func:`placeable_sittings`) placed in this course too, recorded as a
    :class:`~lti.models.Placement` of the launch's registration, deployment and course, and
    the signed Deep Linking response (pylti1p3) naming it: ``{"return_url", "jwt",
    "title"}``."""
    if sitting is not None:
        if sitting not in placeable_sittings(user=user, lti_launch=lti_launch):
            raise LaunchRefused("not_proctor", "Choose one of the exams you run.")
        how = Placement.How.ADDED
    elif version is not None:
        sitting = sitting_create(user=user, version=version, title=title)
        how = Placement.How.DEEP_LINK
    else:
        raise LaunchRefused("deep_link", "Choose a published assessment.")
    Placement.objects.get_or_create(
        sitting=sitting, context=lti_launch.context, defaults={"how": how, "placed_by": user}
    )
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
    logger.info("deep link: sitting %s placed in %s by %s", sitting.pk, lti_launch.context, user.pk)
    return {
        "return_url": str(settings_claim.get("deep_link_return_url", "")),
        "jwt": deep_link.get_response_jwt([resource]),
        "title": sitting.title,
    }


__all__ = [
    "LaunchRefused",
    "PlacedElsewhere",
    "account_for",
    "deep_link_response",
    "enter",
    "grade_post",
    "lineitem_ensure",
    "link_for",
    "nonce_use",
    "placeable_sittings",
    "placeable_versions",
    "placement_make",
    "review_target",
    "role_for",
    "roster_sync",
]
