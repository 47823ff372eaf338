"""Staff sign-in (rate limited), sign-out, the invitation link, the role-based home, and the
page where staff issue, list and revoke their API tokens."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login as auth_login
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import translation
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from accounts import login_throttle, page_language
from accounts.invitation_tokens import TokenInvalid, read_token
from accounts.models import Invitation
from accounts.roles import HOME_AREA, Area, Role
from accounts.selectors import api_tokens_visible_to
from accounts.services import (
    ApiTokenRefused,
    InvitationRefused,
    api_token_issue,
    api_token_revoke,
    invitation_redeem,
)

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

    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        # Failures are counted and locked pairs refused for every password form
        # (accounts.login_throttle); this page only words the refusal inside its own form.
        lockout = login_throttle.check(
            request.POST.get("username", ""), login_throttle.client_address(request)
        )
        if lockout is not None:
            form = self.get_form()
            form.errors.clear()
            response = self.render_to_response(
                self.get_context_data(
                    form=form, lockout_message=login_throttle.lockout_message(lockout)
                )
            )
            response.status_code = 429
            response["Retry-After"] = str(lockout.retry_after_seconds)
            return response
        return super().post(request, *args, **kwargs)


@never_cache
def invitation(request: HttpRequest, token: str) -> HttpResponse:
    """Opens an invitation link: GET shows a confirm page; POST signs the candidate in.

    Redeeming on POST (not GET) keeps link previewers and mail scanners from using up the link.
    The pages speak the language of the page the invitation leads to (the exam's).
    """
    _activate_invitation_language(request, token)
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
        auth_login(request, invite.candidate, backend=settings.AUTHENTICATION_BACKENDS[0])
        messages.success(
            request,
            _("Welcome, %(name)s. You are signed in.") % {"name": invite.candidate.name},
        )
        target = invite.next_path
        if not target or not url_has_allowed_host_and_scheme(target, allowed_hosts=None):
            target = reverse("exam_sessions:candidate-home")
        return HttpResponseRedirect(target)
    return render(request, "accounts/invitation_confirm.html", {"token": token})


def _activate_invitation_language(request: HttpRequest, token: str) -> None:
    """Speak the language of the invitation's destination (else the browser's)."""
    try:
        invitation_id = read_token(token)
    except TokenInvalid:
        return
    next_path = (
        Invitation.objects.filter(pk=invitation_id).values_list("next_path", flat=True).first()
    )
    language = page_language.language_for_path(next_path) if next_path else None
    if language:
        translation.activate(language)
        request.LANGUAGE_CODE = language


@require_GET
def home(request: HttpRequest) -> HttpResponse:
    """Sends each signed-in user to their role's area; anonymous visitors to sign in."""
    if not request.user.is_authenticated:
        return redirect("accounts:login")
    area = HOME_AREA[request.user.role]
    return redirect(AREA_HOME_URLS[area])


def _request_key(text: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(text)
    except ValueError:
        return None


def _refuse_candidates(request: HttpRequest) -> None:
    if request.user.role == Role.CANDIDATE:  # type: ignore[union-attr]
        raise PermissionDenied("Candidates cannot have API tokens.")


@never_cache
@login_required
@require_http_methods(["GET", "POST"])
def api_tokens(request: HttpRequest) -> HttpResponse:
    """Lists the tokens the user may see (an admin sees everyone's); POST issues one to the user.

    The new key is shown in the answer to the POST itself, once, and never stored (the answer is
    not cached); a refused request shows the reason beside the name field with status 400. The
    form carries an idempotency key, so sending it again (a reload) issues nothing (409).
    """
    _refuse_candidates(request)
    context: dict[str, object] = {"issued": None, "error": None, "name": ""}
    status = 200
    if request.method == "POST":
        name = request.POST.get("name", "")
        try:
            context["issued"] = api_token_issue(
                user=request.user,  # type: ignore[arg-type]
                name=name,
                request_key=_request_key(request.POST.get("request_key", "")),
            )
        except ApiTokenRefused as refused:
            context.update(error=refused.message, name=name)
            status = 409 if refused.code == "repeated" else 400
    context["request_key"] = uuid.uuid4()  # the next sending of the form
    tokens = api_tokens_visible_to(request.user).order_by("revoked_at", "-created_at")  # type: ignore[arg-type]
    context["tokens"] = tokens
    context["is_admin"] = request.user.role == Role.ADMIN  # type: ignore[union-attr]
    return render(request, "accounts/api_tokens.html", context, status=status)


@login_required
@require_POST
def api_token_revoke_view(request: HttpRequest, token_id: int) -> HttpResponse:
    """Revokes a token the user may see (their own; an admin any); others answer 404."""
    _refuse_candidates(request)
    token = get_object_or_404(api_tokens_visible_to(request.user), pk=token_id)  # type: ignore[arg-type]
    api_token_revoke(token=token, by=request.user)  # type: ignore[arg-type]
    messages.success(request, _("Token “%(name)s” revoked.") % {"name": token.name})
    return redirect("accounts:api-tokens")
