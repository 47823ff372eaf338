"""Area access for views and API endpoints (the role matrix of accounts.roles).

Anonymous visitors are sent to sign in (pages) or get 401/403 (API); signed-in users whose role may
not enter an area get 403 with a page naming the area. Objects the user may not see are filtered out
by the app's selectors, so they answer 404.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Concatenate

from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.views import APIView

from accounts.models import User
from accounts.roles import Area


def signed_in_user(request: HttpRequest | Request) -> User:
    """The request's signed-in user; a view behind ``area_required`` or ``AreaPermission`` has one.

    Fails closed: an anonymous request that reaches here gets 403, never a half-served page.
    """
    user = request.user
    if not isinstance(user, User) or not user.is_authenticated:
        raise PermissionDenied("Sign in to use this page.")
    return user


def area_required[**P](
    area: Area,
) -> Callable[
    [Callable[Concatenate[HttpRequest, P], HttpResponse]],
    Callable[Concatenate[HttpRequest, P], HttpResponse],
]:
    """View decorator: the signed-in user's role must be allowed into ``area``."""

    def decorator(
        view: Callable[Concatenate[HttpRequest, P], HttpResponse],
    ) -> Callable[Concatenate[HttpRequest, P], HttpResponse]:
        @wraps(view)
        def wrapped(request: HttpRequest, /, *args: P.args, **kwargs: P.kwargs) -> HttpResponse:
            if not request.user.is_authenticated:
                return redirect_to_login(request.get_full_path())
            if not signed_in_user(request).may_enter(area):
                raise PermissionDenied(f"Your role cannot open the {area.value} area.")
            return view(request, *args, **kwargs)

        wrapped.area = area  # type: ignore[attr-defined]
        return wrapped

    return decorator


class AreaPermission(BasePermission):
    """DRF permission: set ``area`` on the view; the user's role must be allowed into it. A view
    without an area refuses everyone."""

    message = "Your role cannot use this part of the API."

    def has_permission(self, request: Request, view: APIView) -> bool:
        """Refuses a view that names no area (fail closed; ``accounts.area_checks`` finds such
        a view at start-up), an anonymous request, and a role not allowed into the area."""
        user = request.user
        area: Area | None = getattr(view, "area", None)
        if area is None:
            return False
        return bool(user and user.is_authenticated and user.may_enter(area))
