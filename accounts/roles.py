"""Roles and the areas of the product each role may enter.

The matrix is documented in docs/permissions.md; tests/accounts/test_permission_matrix.py checks
every cell. Per-object rules (whose package, which sitting) live in each app's selectors.
"""

from __future__ import annotations

from enum import StrEnum

from django.db import models
from django.utils.translation import gettext_lazy as _


class Role(models.TextChoices):
    # Translated labels: the header's role badge, in the exam's language on a candidate's page
    # and the browser's on a staff page (docs/i18n.md, "Terms").
    AUTHOR = "author", _("Author")
    PROCTOR = "proctor", _("Proctor")
    CANDIDATE = "candidate", _("Candidate")
    ADMIN = "admin", _("Administrator")


class Area(StrEnum):
    """A part of the product behind one URL prefix."""

    STUDIO = "studio"  # authoring studio, publishing (/studio/)
    PROCTOR = "proctor"  # sittings, live dashboard (/proctor/)
    EXAM = "exam"  # the candidate's exam room (/exam/)
    MARKING = "marking"  # marks, moderation, reports (/marking/)
    ADMIN = "admin"  # Django admin console (/admin/)


AREA_ROLES: dict[Area, frozenset[str]] = {
    Area.STUDIO: frozenset({Role.AUTHOR, Role.ADMIN}),
    Area.PROCTOR: frozenset({Role.PROCTOR, Role.AUTHOR, Role.ADMIN}),
    Area.EXAM: frozenset({Role.CANDIDATE}),
    Area.MARKING: frozenset({Role.AUTHOR, Role.ADMIN}),
    Area.ADMIN: frozenset({Role.ADMIN}),
}

LISTENER_ROLES: frozenset[str] = frozenset({Role.PROCTOR, Role.ADMIN})
"""Roles that may listen in on a voice session they can see (proctors of its sitting, admins)."""

# Where each role lands after signing in.
HOME_AREA: dict[str, Area] = {
    Role.AUTHOR: Area.STUDIO,
    Role.PROCTOR: Area.PROCTOR,
    Role.CANDIDATE: Area.EXAM,
    Role.ADMIN: Area.ADMIN,
}


def role_may_enter(role: str, area: Area) -> bool:
    """Whether a user of ``role`` may enter ``area``."""
    return role in AREA_ROLES[area]
