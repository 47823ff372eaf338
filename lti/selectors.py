"""Reads of the LTI app: the URLs an LMS administrator enters (docs/lms.md), the sittings an
instructor may place in another of their courses, where a session's grade goes."""

from __future__ import annotations

import uuid
from typing import Final

from django.urls import reverse
from lti_tool.models import LtiLaunch, LtiRegistration

from accounts.models import User
from lti.models import CandidateLink, GradePassback, LaunchAccount, SittingLink
from sessions.models import ExamSession, Sitting

SCORE_SCOPE: Final = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
LINEITEM_SCOPE: Final = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCORE_MAXIMUM: Final = 100.0


def tool_urls(base: str, registration: LtiRegistration | None = None) -> dict[str, str]:
    """The tool's registration URLs on ``base`` (the public URL). The login initiation URL
    names a registration (``<registration uuid>`` until one is registered)."""
    base = base.rstrip("/")
    login = (
        base + reverse("lti:login", args=[registration.uuid])
        if registration is not None
        else base + "/lti/login/<registration uuid>/"
    )
    return {
        "OpenID Connect login initiation URL": login,
        "Launch / redirect / target link URI": base + reverse("lti:launch"),
        "Public keyset (JWKS) URL": base + reverse("lti:jwks"),
        "Dynamic registration URL": base + reverse("lti:register"),
    }


def placeable_sittings(*, user: User, lti_launch: LtiLaunch) -> list[Sitting]:
    """Sittings ``user`` proctors that are placed in another course of the launch's LMS
    (registration): the picker offers to place one of them in this course too."""
    return list(
        Sitting.objects.filter(
            proctors=user,
            is_preview=False,
            lti_placements__context__deployment__registration=lti_launch.registration,
        )
        .exclude(lti_placements__context=lti_launch.context)
        .distinct()
        .order_by("-created_at")[:100]
    )


def grade_targets(*, session: ExamSession) -> list[tuple[SittingLink, str]]:
    """Where the session's grade goes: for each course the candidate came through (their
    launch or their course's roster), the link they used last there, with their user id on
    that LMS. Only links that may post scores; never another LMS's link."""
    account = LaunchAccount.objects.filter(user_id=session.candidate_id).select_related("lti_user")
    found = account.first()
    if found is None:
        return []
    rows = (
        CandidateLink.objects.filter(
            session=session, link__registration_id=found.lti_user.registration_id
        )
        .select_related("link__registration", "link__resource_link", "link__sitting")
        .order_by("-seen_at", "-id")
    )
    targets: dict[object, tuple[SittingLink, str]] = {}
    for row in rows:
        key = row.link.placement_id or f"link-{row.link_id}"
        if key not in targets and SCORE_SCOPE in row.link.ags_scopes:
            targets[key] = (row.link, found.lti_user.sub)
    return list(targets.values())


def resync_sessions(
    *, session_ids: list[str], sitting_ids: list[str], failed_only: bool
) -> list[uuid.UUID]:
    """Sessions whose grade ``manage.py lti_resync_grades`` sends again: those named (or of the
    sittings named, or all) that reached a course through a link; with ``failed_only``, only
    those whose last attempt at some line item was refused."""
    rows = CandidateLink.objects.all()
    if session_ids:
        rows = rows.filter(session_id__in=[uuid.UUID(s) for s in session_ids])
    if sitting_ids:
        rows = rows.filter(session__sitting_id__in=[uuid.UUID(s) for s in sitting_ids])
    chosen = sorted({s for s in rows.values_list("session_id", flat=True)}, key=str)
    if not failed_only:
        return chosen
    failed: list[uuid.UUID] = []
    for session_id in chosen:
        last: dict[int, str] = {}
        for link_id, status in GradePassback.objects.filter(session_id=session_id).values_list(
            "link_id", "status"
        ):
            last[link_id] = status
        if GradePassback.Status.FAILED in last.values():
            failed.append(session_id)
    return failed
