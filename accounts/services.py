"""Writes for accounts: users and invitations. Keyword-only arguments, atomic."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import formats, timezone

from accounts.invitation_tokens import TokenInvalid, make_token, read_token
from accounts.models import Invitation, User
from accounts.roles import Role


class InvitationRefused(Exception):
    """An invitation link that cannot be used; ``message`` is shown to the candidate."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason  # tampered | unknown | expired | used | revoked
        self.message = message


def user_create(
    *,
    username: str,
    role: str,
    password: str | None = None,
    email: str = "",
    display_name: str = "",
) -> User:
    """Creates a user with one role; without a password the account cannot sign in by password."""
    if role not in Role.values:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(Role.values)}")
    user = User(username=username, role=role, email=email, display_name=display_name)
    if password:
        user.set_password(password)
    else:
        user.set_unusable_password()
    user.full_clean(exclude=["password"])
    user.save()
    return user


def candidate_get_or_create(*, email: str, display_name: str = "") -> User:
    """The candidate account for an email address (created on first invitation)."""
    email = email.strip().lower()
    user = User.objects.filter(username=email).first()
    if user is None:
        return user_create(
            username=email, role=Role.CANDIDATE, email=email, display_name=display_name
        )
    if user.role != Role.CANDIDATE:
        raise ValueError(f"{email} belongs to a {user.get_role_display()} account, not a candidate")
    return user


@dataclass(frozen=True)
class IssuedInvitation:
    invitation: Invitation
    token: str

    @property
    def path(self) -> str:
        return reverse("accounts:invitation", kwargs={"token": self.token})

    @property
    def url(self) -> str:
        return settings.VIVA_PUBLIC_URL + self.path


def invitation_create(
    *,
    candidate: User,
    created_by: User | None,
    ttl: timedelta | None = None,
    next_path: str = "",
    note: str = "",
) -> IssuedInvitation:
    """Issues a single-use link for ``candidate`` that expires after ``ttl``."""
    if candidate.role != Role.CANDIDATE:
        raise ValueError("invitations are for candidate accounts only")
    if next_path and not next_path.startswith("/"):
        raise ValueError("next_path must be a path on this site, starting with '/'")
    ttl = ttl or timedelta(hours=settings.VIVA_INVITATION_TTL_HOURS)
    if ttl <= timedelta(0):
        raise ValueError("an invitation must expire in the future")
    invitation = Invitation.objects.create(
        candidate=candidate,
        created_by=created_by,
        expires_at=timezone.now() + ttl,
        next_path=next_path,
        note=note,
    )
    return IssuedInvitation(invitation=invitation, token=make_token(invitation.id))


def _when(moment: datetime) -> str:
    return formats.date_format(timezone.localtime(moment), "j F Y, H:i T")


@transaction.atomic
def invitation_redeem(*, token: str, address: str | None) -> Invitation:
    """Marks the invitation used and returns it; raises InvitationRefused with a clear message.

    The row is locked so two simultaneous clicks cannot both succeed.
    """
    try:
        invitation_id = read_token(token)
    except TokenInvalid:
        raise InvitationRefused(
            "tampered",
            "This invitation link is not valid: it has been altered or copied incompletely. "
            "Open the link exactly as you received it, or ask your proctor for a new one.",
        ) from None
    invitation = (
        Invitation.objects.select_for_update()
        .select_related("candidate")
        .filter(id=invitation_id)
        .first()
    )
    if invitation is None:
        raise InvitationRefused(
            "unknown", "This invitation no longer exists. Ask your proctor for a new link."
        )
    now = timezone.now()
    if invitation.revoked_at:
        raise InvitationRefused(
            "revoked", "This invitation was withdrawn. Ask your proctor for a new link."
        )
    if invitation.used_at:
        raise InvitationRefused(
            "used",
            f"This invitation link was already used on {_when(invitation.used_at)} and works only "
            "once. Ask your proctor for a new link if you need to sign in again.",
        )
    if invitation.expires_at <= now:
        raise InvitationRefused(
            "expired",
            f"This invitation link expired on {_when(invitation.expires_at)}. "
            "Ask your proctor for a new link.",
        )
    if not invitation.candidate.is_active:
        raise InvitationRefused(
            "revoked", "This candidate account is disabled. Contact your proctor."
        )
    invitation.used_at = now
    invitation.used_from = address
    invitation.save(update_fields=["used_at", "used_from"])
    return invitation


def invitation_revoke(*, invitation: Invitation) -> Invitation:
    if invitation.revoked_at is None and invitation.used_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation
