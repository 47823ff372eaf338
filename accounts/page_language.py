"""The language of a page a link leads to, for pages shown before it (docs/i18n.md).

An invitation link is opened before the candidate is signed in, yet its pages should speak the
language of the exam it leads to. ``accounts`` cannot know about exams (``sessions`` builds on
it), so the app that owns a page registers a resolver here (``sessions`` does in its
``AppConfig.ready``): given a site path, the language its page is shown in, or None.
"""

from __future__ import annotations

from collections.abc import Callable

Resolver = Callable[[str], str | None]

_resolvers: list[Resolver] = []


def register(resolver: Resolver) -> None:
    """Add ``resolver`` (idempotent)."""
    if resolver not in _resolvers:
        _resolvers.append(resolver)


def language_for_path(path: str) -> str | None:
    """The language of the page at ``path`` per the first resolver that knows, else None."""
    for resolver in _resolvers:
        language = resolver(path)
        if language:
            return language
    return None
