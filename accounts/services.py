"""Writes for accounts: users, invitations and API tokens. Keyword-only arguments, atomic."""

from __future__ import annotations

import ipaddress
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.urls import reverse
from django.utils import formats, timezone
from django.utils.translation import gettext as _

from accounts.api_tokens import SHOWN_PREFIX_LENGTH as TOKEN_SHOWN_PREFIX
from accounts.api_tokens import key_digest, new_key
from accounts.invitation_tokens import TokenInvalid, make_token, read_token
from accounts.models import ApiToken, Invitation, User
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
            _(
                "This invitation link is not valid: it has been altered or copied incompletely. "
                "Open the link exactly as you received it, or ask your proctor for a new one."
            ),
        ) from None
    invitation = (
        Invitation.objects.select_for_update()
        .select_related("candidate")
        .filter(id=invitation_id)
        .first()
    )
    if invitation is None:
        raise InvitationRefused(
            "unknown", _("This invitation no longer exists. Ask your proctor for a new link.")
        )
    now = timezone.now()
    if invitation.revoked_at:
        raise InvitationRefused(
            "revoked", _("This invitation was withdrawn. Ask your proctor for a new link.")
        )
    if invitation.used_at:
        raise InvitationRefused(
            "used",
            _(
                "This invitation link was already used on %(when)s and works only once. Ask your "
                "proctor for a new link if you need to sign in again."
            )
            % {"when": _when(invitation.used_at)},
        )
    if invitation.expires_at <= now:
        raise InvitationRefused(
            "expired",
            _("This invitation link expired on %(when)s. Ask your proctor for a new link.")
            % {"when": _when(invitation.expires_at)},
        )
    if not invitation.candidate.is_active:
        raise InvitationRefused(
            "revoked", _("This candidate account is disabled. Contact your proctor.")
        )
    invitation.used_at = now
    invitation.used_from = _ip_or_none(address)
    invitation.save(update_fields=["used_at", "used_from"])
    return invitation


def invitation_revoke(*, invitation: Invitation) -> Invitation:
    if invitation.revoked_at is None and invitation.used_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
    return invitation


def _ip_or_none(address: str | None) -> str | None:
    """The client's IP address, or ``None`` when there is none (a Unix-socket proxy, a test
    client): never anything else in the ``used_from`` column."""
    try:
        return str(ipaddress.ip_address((address or "").strip()))
    except ValueError:
        return None


# --- API tokens ---------------------------------------------------------------------------------

MAX_ACTIVE_API_TOKENS = 20
API_TOKEN_NAME_MAX = 100  # ApiToken.name's max_length


class ApiTokenRefused(Exception):
    """An API token that cannot be issued; ``message`` says why, for the person asking."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code  # candidate | name | too_many | repeated
        self.message = message


@dataclass(frozen=True)
class IssuedApiToken:
    """A new token and its key: the only time the key exists outside the caller's hands."""

    token: ApiToken
    key: str


def api_token_issue(
    *, user: User, name: str, request_key: uuid.UUID | None = None
) -> IssuedApiToken:
    """Issue a named API key to ``user`` (staff roles only: candidates use no API).

    Only the key's digest and prefix are stored; the key is returned once. Refused
    (:class:`ApiTokenRefused`) for a candidate, a blank or over-long name, a user who already
    holds :data:`MAX_ACTIVE_API_TOKENS` unrevoked keys, or a ``request_key`` (the issuing
    form's idempotency key) that already issued a token: a form sent twice (a reload) issues
    one token, whose key was shown the first time.
    """
    if user.role == Role.CANDIDATE:
        raise ApiTokenRefused("candidate", _("Candidates cannot have API tokens."))
    label = (name or "").strip()
    if not label or len(label) > API_TOKEN_NAME_MAX:
        raise ApiTokenRefused("name", _("Give the token a name of 1 to 100 characters."))
    with transaction.atomic():
        User.objects.select_for_update().filter(pk=user.pk).first()  # serialise the count
        if request_key is not None:
            earlier = ApiToken.objects.filter(user=user, request_key=request_key).first()
            if earlier is not None:
                raise ApiTokenRefused(
                    "repeated",
                    _(
                        "This form was already sent: token “%(name)s” was issued then and its "
                        "key shown once. Revoke it and issue a new one if you did not copy the key."
                    )
                    % {"name": earlier.name},
                )
        if ApiToken.objects.active().filter(user=user).count() >= MAX_ACTIVE_API_TOKENS:
            raise ApiTokenRefused(
                "too_many",
                _("You already have %(count)d active tokens: revoke one first.")
                % {"count": MAX_ACTIVE_API_TOKENS},
            )
        key = new_key()
        token = ApiToken.objects.create(
            user=user,
            name=label,
            prefix=key[:TOKEN_SHOWN_PREFIX],
            key_hash=key_digest(key),
            request_key=request_key,
        )
    return IssuedApiToken(token=token, key=key)


def api_token_revoke(*, token: ApiToken, by: User) -> ApiToken:
    """Revoke ``token`` (from then on it authenticates nothing). Revoking twice keeps the first
    revocation. Who may revoke which token is decided by the caller's queryset
    (``accounts.selectors.api_tokens_visible_to``)."""
    with transaction.atomic():
        row = ApiToken.objects.select_for_update().get(pk=token.pk)
        if row.revoked_at is None:
            row.revoked_at = timezone.now()
            row.revoked_by = by
            row.save(update_fields=["revoked_at", "revoked_by"])
    return row
