"""A validated launch's claims bounded to what the tool stores, before django-lti stores them.

django-lti keeps the platform user, course, link and platform instance in columns of fixed
length (``lti_tool``: a name of 500 characters, an email of 254, a picture URL of 200, a course
label of 255...). A longer value (a signed CDN avatar URL, a long course label) would fail the
database write and every launch of that person or course with it. :func:`bound` applies
:data:`BOUNDS`, read from those columns' own ``max_length``:

* **identifiers** (``sub``, the deployment, course and link ids: at most 255 characters in LTI
  1.3) over their column are :class:`TooLong` (the launch is refused, ``too_long``; a roster
  member skipped): cutting one could make it another's;
* **service URLs** (the roster's, Names and Role Provisioning; the course's line items and the
  link's line item, Assignment and Grade Services) over django-lti's 200 characters are
  :class:`TooLong` too: dropped, roster and grade sync would fail unseen later, so the launch is
  refused saying which, for the LMS's administrator;
* **display text** (names, the course's label and title, the link's title, the platform's name
  and version) is cut to its column;
* **optional values** nothing depends on (the email, the picture, the platform's URL and
  contact) are left out, so the stored ones stay.

The same rules bound a Names and Role Provisioning member (``user_id``, names, email, picture)
before ``lti.services.roster_sync`` stores it.
"""

from __future__ import annotations

import logging
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from django.db import models
from lti_tool.models import (
    LtiContext,
    LtiDeployment,
    LtiLineItem,
    LtiPlatformInstance,
    LtiResourceLink,
    LtiUser,
)

logger = logging.getLogger(__name__)

CLAIM: Final = "https://purl.imsglobal.org/spec/lti/claim/"
CONTEXT: Final = CLAIM + "context"
RESOURCE_LINK: Final = CLAIM + "resource_link"
PLATFORM: Final = CLAIM + "tool_platform"
DEPLOYMENT: Final = CLAIM + "deployment_id"
NRPS: Final = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
AGS: Final = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"


class TooLong(ValueError):
    """An identifier longer than its column (and than LTI allows); the message names it."""


@dataclass(frozen=True)
class Bound:
    """A claim (its path in the id token), the column that stores it, and what happens to a
    longer value."""

    path: tuple[str, ...]
    model: type[models.Model]
    field: str
    over: Literal["refuse", "refuse_service", "cut", "drop"]

    @property
    def limit(self) -> int:
        max_length = getattr(self.model._meta.get_field(self.field), "max_length", None)
        return int(max_length) if max_length is not None else 10**9


BOUNDS: Final = (
    Bound(("sub",), LtiUser, "sub", "refuse"),
    Bound(("user_id",), LtiUser, "sub", "refuse"),  # a roster member's
    Bound((DEPLOYMENT,), LtiDeployment, "deployment_id", "refuse"),
    Bound((CONTEXT, "id"), LtiContext, "id_on_platform", "refuse"),
    Bound((RESOURCE_LINK, "id"), LtiResourceLink, "id_on_platform", "refuse"),
    Bound((PLATFORM, "guid"), LtiPlatformInstance, "guid", "refuse"),
    Bound((NRPS, "context_memberships_url"), LtiContext, "memberships_url", "refuse_service"),
    Bound((AGS, "lineitems"), LtiContext, "lineitems_url", "refuse_service"),
    Bound((AGS, "lineitem"), LtiLineItem, "url", "refuse_service"),
    Bound(("given_name",), LtiUser, "given_name", "cut"),
    Bound(("family_name",), LtiUser, "family_name", "cut"),
    Bound(("name",), LtiUser, "name", "cut"),
    Bound((CONTEXT, "label"), LtiContext, "label", "cut"),
    Bound((CONTEXT, "title"), LtiContext, "title", "cut"),
    Bound((RESOURCE_LINK, "title"), LtiResourceLink, "title", "cut"),
    Bound((PLATFORM, "name"), LtiPlatformInstance, "name", "cut"),
    Bound((PLATFORM, "version"), LtiPlatformInstance, "version", "cut"),
    Bound(("email",), LtiUser, "email", "drop"),
    Bound(("picture",), LtiUser, "picture_url", "drop"),
    Bound((PLATFORM, "url"), LtiPlatformInstance, "url", "drop"),
    Bound((PLATFORM, "contact_email"), LtiPlatformInstance, "contact_email", "drop"),
)
"""Every claim django-lti stores in a column of fixed length (module docstring)."""


def _holder(claims: MutableMapping[str, Any], path: tuple[str, ...]) -> MutableMapping[str, Any]:
    """The mapping holding the path's last key (empty when the claim is absent)."""
    holder: Any = claims
    for key in path[:-1]:
        holder = holder.get(key) if isinstance(holder, MutableMapping) else None
    return holder if isinstance(holder, MutableMapping) else {}


def _short(key: str) -> str:
    """A claim's name without its URI prefix (``namesroleservice``, ``endpoint``, ``context``)."""
    return key.rsplit("/", 1)[-1] if key.startswith("https://") else key


def bound(claims: MutableMapping[str, Any]) -> list[str]:
    """Apply :data:`BOUNDS` to ``claims`` (a validated launch's or a roster member's, changed
    in place); returns the claims cut or left out (logged). :class:`TooLong` for a long
    identifier."""
    changed = []
    for rule in BOUNDS:
        holder, key = _holder(claims, rule.path), rule.path[-1]
        value = holder.get(key)
        if not isinstance(value, str) or len(value) <= rule.limit:
            continue
        name = "/".join(_short(p) for p in rule.path)
        if rule.over == "refuse":
            raise TooLong(f"its {name} is longer than LTI allows ({rule.limit} characters)")
        if rule.over == "refuse_service":
            raise TooLong(f"its {name} is longer than the tool can keep ({rule.limit} characters)")
        if rule.over == "cut":
            holder[key] = value[: rule.limit]
        else:
            del holder[key]
        changed.append(name)
    if changed:
        logger.warning("LTI launch claims over their columns, %s: %s", "cut or left out", changed)
    return changed
