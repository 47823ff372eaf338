"""Staff sign-in (rate limited), sign-out, the invitation link, and the role-based home."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth import login as auth_login
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts import login_throttle
from accounts.roles import HOME_AREA, Area
from accounts.services import InvitationRefused, invitation_redeem

AREA_HOME_URLS = {
    Area.STUDIO: "authoring:package-list",
    Area.PROCTOR: "exam_sessions:proctor-home",
    Area.EXAM: "exam_sessions:candidate-home",
    Area.MARKING: "marking:home",
    Area.ADMIN: "admin:index",
}


class LoginView(auth_views.LoginView):
    """Django's sign-in with a failure limit per (username, address) and per address.

    ``login()`` rotates the session key, so a session id planted before sign-in is useless after.
    """

    template_name = "accounts/login.html"
    redirect_authenticated_user = True

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        username = request.POST.get("username", "")
        address = login_throttle.client_address(request)
        lockout = login_throttle.check(username, address)
        if lockout is not None:
            minutes = max(1, round(lockout.retry_after_seconds / 60))
            form = self.get_form()
            form.errors.clear()
            response = self.render_to_response(
                self.get_context_data(
                    form=form,
                    lockout_message=(
                        "Too many failed sign-in attempts. For your security, sign-in is paused "
                        f"for this account from your address; try again in about {minutes} minute"
                        f"{'s' if minutes != 1 else ''}."
                    ),
                )
            )
            response.status_code = 429
            response["Retry-After"] = str(lockout.retry_after_seconds)
            return response
        return super().post(request, *args, **kwargs)

    def form_invalid(self, form: Any) -> HttpResponse:
        login_throttle.record_failure(
            self.request.POST.get("username", ""), login_throttle.client_address(self.request)
        )
        return super().form_invalid(form)

    def form_valid(self, form: Any) -> HttpResponse:
        login_throttle.record_success(
            form.get_user().get_username(), login_throttle.client_address(self.request)
        )
        return super().form_valid(form)


@never_cache
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """Opens an invitation link: GET shows a confirm page; POST signs the candidate in.

    Redeeming on POST (not GET) keeps link previewers and mail scanners from using up the link.
    """
    if request.method == "POST":
        try:
            invite = invitation_redeem(token=token, address=login_throttle.client_address(request))
        except InvitationRefused as refused:
            return render(
                request,
                "accounts/invitation_refused.html",
                {"message": refused.message, "reason": refused.reason},
                status=410 if refused.reason in {"expired", "used", "revoked"} else 400,
            )
        auth_login(request, invite.candidate, backend="django.contrib.auth.backends.ModelBackend")
        messages.success(request, f"Welcome, {invite.candidate.name}. You are signed in.")
        target = invite.next_path
        if not target or not url_has_allowed_host_and_scheme(target, allowed_hosts=None):
            target = reverse("exam_sessions:candidate-home")
        return HttpResponseRedirect(target)
    return render(request, "accounts/invitation_confirm.html", {"token": token})


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """Sends each signed-in user to their role's area; anonymous visitors to sign in."""
    if not request.user.is_authenticated:
        return redirect("accounts:login")
    area = HOME_AREA[request.user.role]  # type: ignore[union-attr]
    return redirect(AREA_HOME_URLS[area])
