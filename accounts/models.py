"""The user model (one role per user) and candidate invitations."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.models import AbstractUser, AnonymousUser
from django.db import models
from django.utils import timezone

from accounts.roles import Area, Role, role_may_enter

type Requester = AbstractBaseUser | AnonymousUser
"""Who asks, as ``request.user`` has it: an account or the anonymous visitor. Selectors and
querysets that take one decide what it may see themselves and fail closed on anything but an
active account of the right role (issue #36: not ``object``)."""


class User(AbstractUser):
    """A person with exactly one role. Admins are Django staff and superusers; nobody else is."""

    role = models.CharField(max_length=16, choices=Role.choices, default=Role.CANDIDATE)
    display_name = models.CharField(max_length=150, blank=True)

    class Meta:
        ordering = ["username"]

    def save(self, *args: object, **kwargs: object) -> None:
        # The admin console is for the admin role only; the flags follow the role.
        self.is_staff = self.is_superuser = self.role == Role.ADMIN
        super().save(*args, **kwargs)  # type: ignore[arg-type]

    @property
    def name(self) -> str:
        return self.display_name or self.get_full_name() or self.username

    def may_enter(self, area: Area) -> bool:
        return self.is_active and role_may_enter(self.role, area)


class InvitationQuerySet(models.QuerySet["Invitation"]):
    def usable(self) -> InvitationQuerySet:
        return self.filter(
            used_at__isnull=True, revoked_at__isnull=True, expires_at__gt=timezone.now()
        )


class Invitation(models.Model):
    """A single-use, expiring link that signs a candidate in.

    The link carries a signed token naming this row; the row says whether it is still usable.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    candidate = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="invitations"
    )
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.PROTECT,
        related_name="invitations_sent",
        null=True,
        blank=True,
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    used_at = models.DateTimeField(null=True, blank=True)
    used_from = models.GenericIPAddressField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Where the candidate goes once signed in (an exam room URL); empty means their exam list.
    next_path = models.CharField(max_length=300, blank=True)
    note = models.CharField(max_length=200, blank=True)

    objects = InvitationQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["candidate", "-created_at"])]

    def __str__(self) -> str:
        return f"Invitation for {self.candidate} (expires {self.expires_at:%Y-%m-%d %H:%M})"

    @property
    def state(self) -> str:
        if self.revoked_at:
            return "revoked"
        if self.used_at:
            return "used"
        if self.expires_at <= timezone.now():
            return "expired"
        return "usable"


class ApiTokenQuerySet(models.QuerySet["ApiToken"]):
    def active(self) -> ApiTokenQuerySet:
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    """A named key for the REST API (``Authorization: Token <key>``), issued from the web UI.

    Only a SHA-256 digest of the key is stored (``key_hash``); the key itself is shown once, when
    it is issued. A key is 256 random bits, so a plain (unsalted) digest is as strong as a
    password hash for it and lets a request's key be found by an indexed lookup. ``prefix`` (the
    key's first characters) lets a person recognise a key in the list; it is not secret.
    """

    name = models.CharField(max_length=100)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    # The issuing form's idempotency key: sending the same form twice issues one token.
    request_key = models.UUIDField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    revoked_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["user", "-created_at"])]
        constraints = [
            models.UniqueConstraint(
                fields=["user", "request_key"], name="api_token_one_per_request_key"
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…) of {self.user}"
