"""The system check that every API view behind :class:`~accounts.access.AreaPermission` names
its area (viva.E030).

``AreaPermission`` refuses a view that names no area (it fails closed), so such a view would
answer 403 to everyone; this check finds it at start-up instead, by walking the URL table.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from django.apps import AppConfig
from django.core import checks
from django.urls import URLPattern, URLResolver, get_resolver

from accounts.access import AreaPermission


def _views(
    patterns: Sequence[URLPattern | URLResolver], prefix: str = ""
) -> Iterator[tuple[str, Any]]:
    """(route, view class) of every class-based view in ``patterns``, nested included."""
    for pattern in patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _views(pattern.url_patterns, route)
            continue
        view_class = getattr(pattern.callback, "cls", None) or getattr(
            pattern.callback, "view_class", None
        )
        if view_class is not None:
            yield route, view_class


def arealess_views(urlconf: str | None = None) -> list[tuple[str, str]]:
    """(route, view name) of every view that uses ``AreaPermission`` without an ``area``."""
    found = []
    for route, view_class in _views(get_resolver(urlconf).url_patterns):
        permissions = getattr(view_class, "permission_classes", ()) or ()
        uses_area = any(
            isinstance(permission, type) and issubclass(permission, AreaPermission)
            for permission in permissions
        )
        if uses_area and getattr(view_class, "area", None) is None:
            found.append((route, f"{view_class.__module__}.{view_class.__qualname__}"))
    return found


@checks.register(checks.Tags.security)
def check_view_areas(
    app_configs: Sequence[AppConfig] | None = None, **kwargs: object
) -> list[checks.CheckMessage]:
    """Every view behind ``AreaPermission`` names the area its users must be allowed into."""
    return [
        checks.Error(
            f"{name} (/{route}) uses AreaPermission but names no area, so it refuses everyone.",
            hint="Set area = Area.<the part of the product it belongs to> on the view.",
            obj=name,
            id="viva.E030",
        )
        for route, name in arealess_views()
    ]
