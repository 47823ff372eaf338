"""Template filters of the marking pages."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import SupportsFloat

from django import template
from django.utils.text import slugify

register = template.Library()


@register.filter
def percent(value: SupportsFloat | str | None) -> str:
    """0.8333 → ``83.3`` (a score in [0, 1] as a percentage with one decimal); ``-`` for none."""
    if value is None or value == "":
        return "-"
    return f"{float(value) * 100:.1f}"


@register.filter
def slug(value: object) -> str:
    return slugify(str(value))


@register.filter
def joinkeys(items: Iterable[Mapping[str, object]] | None) -> str:
    """Space-separated ``key`` values of a list of dicts (data attributes)."""
    return " ".join(str(item["key"]) for item in items or [])


@register.filter
def get(mapping: object, key: object) -> object:
    """``mapping[key]`` for a dict (``None`` when absent or not a dict)."""
    return mapping.get(key) if isinstance(mapping, Mapping) else None
