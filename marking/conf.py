"""Marking settings, read in one place.

Every value comes from ``django.conf.settings`` when the project defines it, else from the
environment variable of the same name, else the default (read on every use, so tests can
override them with pytest-django's ``settings`` fixture). docs/marking.md lists them.

``VIVA_MARKING_PANEL_MODELS``
    The LLM marking panel: comma-separated models, each ``model`` or ``name=model``. Empty (the
    default) skips the panel with a notice: the deterministic marks stand (offline).
``VIVA_MARKING_PANEL_BASE_URL``
    An OpenAI-compatible endpoint (``…/v1``); default ``OPENAI_BASE_URL``, else OpenAI's.
``VIVA_MARKING_PANEL_API_KEY``
    Its key; default ``OPENAI_API_KEY``.
``VIVA_MARKING_PANEL_TIMEOUT``
    Seconds per model call (default 60).
"""

from __future__ import annotations

import os

from django.conf import settings

from ioa.marking import PanelMember

DEFAULT_BASE_URL = "https://api.openai.com/v1"


def _raw(name: str) -> object:
    if hasattr(settings, name):
        return getattr(settings, name)
    return os.environ.get(name)


def _text(name: str, default: str = "") -> str:
    value = _raw(name)
    return default if value is None else str(value).strip() or default


def panel_members() -> list[PanelMember]:
    """The configured panel, in order (empty: no panel)."""
    value = _raw("VIVA_MARKING_PANEL_MODELS")
    items = value if isinstance(value, list | tuple) else str(value or "").split(",")
    members: list[PanelMember] = []
    for raw in items:
        item = str(raw).strip()
        if not item:
            continue
        name, _, model = item.partition("=")
        members.append(PanelMember(name=name.strip(), model=(model or name).strip()))
    return members


def panel_base_url() -> str:
    return _text("VIVA_MARKING_PANEL_BASE_URL", _text("OPENAI_BASE_URL", DEFAULT_BASE_URL))


def panel_api_key() -> str:
    return _text("VIVA_MARKING_PANEL_API_KEY", _text("OPENAI_API_KEY", ""))


def panel_timeout() -> float:
    return float(_text("VIVA_MARKING_PANEL_TIMEOUT", "60"))
