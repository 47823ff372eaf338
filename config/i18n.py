"""Translations for the site (docs/i18n.md): the JavaScript catalogue per language.

Candidate pages are shown in the exam's language, not the browser's, so the catalogue's URL
names the language (``/jsi18n/de/``); ``base.html`` links the one for the page's language.
"""

from __future__ import annotations

from django.conf import settings
from django.http import Http404, HttpRequest, HttpResponse
from django.utils import translation
from django.views.decorators.cache import cache_control
from django.views.i18n import JavaScriptCatalog


class LanguageCatalog(JavaScriptCatalog):
    """Django's JavaScript catalogue for the language named in the URL (404 for any other)."""

    def get(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        language = str(kwargs.pop("lang", ""))
        if language not in dict(settings.LANGUAGES):
            raise Http404("No such language.")
        with translation.override(language):
            return super().get(request, *args, **kwargs)


javascript_catalog = cache_control(max_age=3600, public=True)(LanguageCatalog.as_view())
