"""The tool's LTI endpoints (docs/lms.md): OIDC third-party login initiation, the launch, the
JWKS, Dynamic Registration. Every refusal answers a clear page (``templates/lti/refused.html``)
with a 4xx status and logs a line ``LTI launch refused: <code>: <reason>``; nothing is signed in
and no session is left behind (``web.no_session``)."""

from __future__ import annotations

import logging
import uuid
from urllib.parse import urlencode, urlsplit

import requests
from django.contrib.auth import login
from django.core.exceptions import ValidationError
from django.http import (
    HttpRequest,
    HttpResponse,
    HttpResponseBase,
    HttpResponseRedirect,
    QueryDict,
)
from django.middleware.csrf import CsrfViewMiddleware
from django.shortcuts import render
from django.urls import reverse
from django.utils.decorators import method_decorator
from django.utils.http import url_has_allowed_host_and_scheme
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.clickjacking import xframe_options_exempt
from django.views.decorators.csrf import csrf_exempt
from lti_tool.constants import SESSION_KEY as LAUNCH_SESSION_KEY
from lti_tool.models import LtiLaunch
from lti_tool.utils import DjangoToolConfig, get_launch_from_request, sync_data_from_launch
from lti_tool.views import LtiLaunchBaseView
from pylti1p3.contrib.django.launch_data_storage.cache import DjangoCacheDataStorage
from pylti1p3.contrib.django.oidc_login import DjangoOIDCLogin
from pylti1p3.exception import LtiException, OIDCException

from accounts.access import signed_in_user
from accounts.login_throttle import ThrottledModelBackend
from accounts.models import User
from accounts.roles import Role
from lti import claims, dynamic_registration, framing, picker_state, placement_views, services
from lti.refusal_page import refused
from lti.services import LaunchRefused

logger = logging.getLogger(__name__)

BACKEND = f"{ThrottledModelBackend.__module__}.{ThrottledModelBackend.__qualname__}"
"""The backend an LTI sign-in is recorded under: the site's own password backend (named in
``AUTHENTICATION_BACKENDS``; a session names its backend, and one not listed there signs the
user out on the next request). The platform's signed launch has already authenticated them."""
DEEP_LINK_SESSION_KEY = "viva-lti-deep-link"


def csrf_refusal(request: HttpRequest) -> HttpResponseBase | None:
    """Django's CSRF check (the refusal it would answer, or None) for a view exempt from it."""

    def view(request: HttpRequest) -> HttpResponse:
        return HttpResponse()

    return CsrfViewMiddleware(view).process_view(request, view, (), {})


def _target_here(request: HttpRequest, target: str) -> bool:
    """Whether a login's ``target_link_uri`` is an http(s) URL on this site's host (LTI 1.3
    §5.1.1.1: the tool checks it; pylti1p3 sends it on as the ``redirect_uri`` the platform
    posts the id token to)."""
    parts = urlsplit(target)
    return (
        parts.scheme in {"http", "https"}
        and bool(parts.netloc)
        and url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()})
    )


@method_decorator((csrf_exempt, xframe_options_exempt, never_cache), name="dispatch")
class LoginInitiationView(View):
    """OIDC third-party login initiation (GET or POST from the platform) → the platform's
    authorization endpoint, with state and nonce (pylti1p3)."""

    def get(self, request: HttpRequest, registration_uuid: uuid.UUID) -> HttpResponse:
        return self._login(request, registration_uuid, request.GET)

    def post(self, request: HttpRequest, registration_uuid: uuid.UUID) -> HttpResponse:
        return self._login(request, registration_uuid, request.POST)

    def _login(
        self, request: HttpRequest, registration_uuid: uuid.UUID, params: QueryDict
    ) -> HttpResponse:
        target = params.get("target_link_uri")
        if not target:
            return refused(request, "no_target", "The login request names no target.", 400)
        if not _target_here(request, target):  # the platform would post the id token there
            return refused(
                request,
                "target",
                "The login request names a target that is not this tool. Ask your "
                "administrator to check the tool's launch URL in the LMS.",
                400,
                reason=f"target_link_uri {target!r} is not on {request.get_host()!r}",
            )
        oidc = DjangoOIDCLogin(
            request,
            DjangoToolConfig(registration_uuid),
            launch_data_storage=DjangoCacheDataStorage(),
        )
        try:
            response: HttpResponse = oidc.disable_check_cookies().redirect(target)
            framing.framed_cookies(request, response)  # the launch comes into the LMS's frame
            return response
        except (LtiException, OIDCException) as error:  # unknown registration, issuer, client
            return refused(
                request,
                "login",
                "This LMS is not registered with the tool, or sent a login request it cannot "
                "accept. Ask your administrator to check the tool's registration.",
                400,
                reason=f"registration {registration_uuid}, issuer {params.get('iss')!r}, "
                f"client {params.get('client_id')!r}: {error}",
            )


@method_decorator((xframe_options_exempt, never_cache), name="dispatch")
class LaunchView(LtiLaunchBaseView):
    """The launch (id token POSTed by the platform); see ``lti.services``. A refusal after the
    id token is validated is readable in the platform's frame (``lti.framing``)."""

    validated: LtiLaunch | None = None

    def post(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponse:
        self.validated = None
        try:
            response = self._launched(request)
        except LtiException as error:
            return refused(request, "invalid_token", f"The launch was refused: {error}")
        except LaunchRefused as refusal:
            page = refused(request, refusal.code, refusal.message)
            if self.validated is not None:
                framing.allow_platform_frame(page, self.validated)
            return page
        return response

    def _launched(self, request: HttpRequest) -> HttpResponse:
        """django-lti's ``LtiLaunchBaseView.post`` (validate, store, dispatch by message
        type), with the validated claims bounded to the columns that store them first
        (``lti.claims``: a long name is cut, a long picture URL left out, a long id refused)."""
        request.session.clear()
        lti_launch = get_launch_from_request(request)
        try:
            claims.bound(lti_launch.get_launch_data())
        except claims.TooLong as error:
            raise LaunchRefused("too_long", f"The launch was refused: {error}.") from None
        sync_data_from_launch(lti_launch, None)
        self.launch_setup(request, lti_launch)
        if not lti_launch.deployment.is_active:
            return self.handle_inactive_deployment(request, lti_launch)
        request.session[LAUNCH_SESSION_KEY] = lti_launch.get_launch_id()
        setattr(request, "lti_launch", lti_launch)  # noqa: B010 - django-lti's request attribute
        handlers = (
            (lti_launch.is_resource_launch, self.handle_resource_launch),
            (lti_launch.is_deep_link_launch, self.handle_deep_linking_launch),
            (lti_launch.is_submission_review_launch, self.handle_submission_review_launch),
            (lti_launch.is_data_privacy_launch, self.handle_data_privacy_launch),
        )
        handle = next((handler for kind, handler in handlers if kind), None)
        if handle is None:  # pylti1p3 validates only these four message types
            raise LaunchRefused("message_type", "The launch was refused: an unknown message.")
        return handle(request, lti_launch)

    def launch_setup(self, request: HttpRequest, lti_launch: LtiLaunch) -> None:
        self.validated = lti_launch
        nonce = str(lti_launch.get_launch_data().get("nonce", ""))
        services.nonce_use(registration=lti_launch.registration, nonce=nonce)

    def handle_inactive_deployment(
        self, request: HttpRequest, lti_launch: LtiLaunch
    ) -> HttpResponse:
        deployment = lti_launch.deployment.deployment_id
        page = refused(
            request,
            "deployment",
            f"This LMS deployment ({deployment}) is not activated for this tool. Ask your "
            "administrator to activate it.",
        )
        framing.allow_platform_frame(page, lti_launch)
        return page

    def handle_deep_linking_launch(
        self, request: HttpRequest, lti_launch: LtiLaunch
    ) -> HttpResponse:
        """Deep Linking 2.0: an instructor picks a published assessment to place in the
        course (``DeepLinkView``); learners cannot."""
        role = services.role_for(list(lti_launch.roles_claim or []))
        if role == "candidate":
            raise LaunchRefused("not_staff", "Only instructors can place an exam in a course.")
        user = services.account_for(lti_launch=lti_launch, role=role)
        launch_id = lti_launch.get_launch_id()
        login(request, user, backend=BACKEND)
        request.session[DEEP_LINK_SESSION_KEY] = launch_id
        token = picker_state.issue(request, lti_launch, user)
        return HttpResponseRedirect(f"{reverse('lti:deep-link')}?{urlencode({'picker': token})}")

    def handle_resource_launch(self, request: HttpRequest, lti_launch: LtiLaunch) -> HttpResponse:
        role = services.role_for(list(lti_launch.roles_claim or []))
        try:
            link = services.link_for(lti_launch=lti_launch)
        except services.PlacedElsewhere as elsewhere:  # another course's exam (docs/lms.md)
            if not elsewhere.staff:
                raise
            return placement_views.offer(request, lti_launch, elsewhere)
        user = services.account_for(lti_launch=lti_launch, role=role)
        login(request, user, backend=BACKEND)
        target = services.enter(link=link, user=user)
        if role != "candidate":
            try:
                services.lineitem_ensure(link)
                services.roster_sync(link=link)
            except (LtiException, OSError, ValueError) as error:
                logger.warning("LTI line item or roster of %s not synced: %s", link, error)
        return HttpResponseRedirect(target)

    def handle_data_privacy_launch(
        self, request: HttpRequest, lti_launch: LtiLaunch
    ) -> HttpResponse:
        """The LMS's data privacy link (LTI Data Privacy Launch) is not offered: the clear
        refusal (readable in the platform's frame, logged, no session), never django-lti's
        bare 403 text."""
        raise LaunchRefused(
            "data_privacy",
            "This tool has no data privacy page for your LMS. To see or erase what it keeps "
            "about you, ask your institution's data protection contact.",
        )

    def handle_submission_review_launch(
        self, request: HttpRequest, lti_launch: LtiLaunch
    ) -> HttpResponse:
        """The gradebook's "view submission" (``services.review_target``)."""
        role = services.role_for(list(lti_launch.roles_claim or []))
        user = services.account_for(lti_launch=lti_launch, role=role)
        target = services.review_target(lti_launch=lti_launch, user=user)
        login(request, user, backend=BACKEND)
        return HttpResponseRedirect(target)


@method_decorator((csrf_exempt, xframe_options_exempt, never_cache), name="dispatch")
class DeepLinkView(View):
    """The instructor's choice after a Deep Linking request: a published assessment and a title
    → a new sitting, returned to the platform as an ``ltiResourceLink`` content item carrying
    ``viva_sitting`` and a line item (a plain form the instructor submits: no script).

    Shown in the LMS's frame (``lti.framing``): its state is the signed ``picker`` token in its
    URL and form (``lti.picker_state``), not the session cookie a cross-site frame does not get;
    the token is the form's CSRF protection. Without a token (the picker opened in the signed-in
    instructor's own window) the session and Django's CSRF check apply."""

    framed_by: LtiLaunch | None = None
    """The launch whose platform may frame a refusal (a token that names it, spent or not)."""

    def _from_session(self, request: HttpRequest) -> tuple[LtiLaunch, User]:
        launch_id = request.session.get(DEEP_LINK_SESSION_KEY)
        if not launch_id or not request.user.is_authenticated:
            raise LaunchRefused("no_deep_link", picker_state.AGAIN)
        if request.method == "POST" and csrf_refusal(request) is not None:
            raise LaunchRefused("csrf", "The form expired. " + picker_state.AGAIN)
        lti_launch = get_launch_from_request(request, launch_id)
        if not lti_launch.is_deep_link_launch:
            raise LaunchRefused("no_deep_link", picker_state.AGAIN)
        return lti_launch, signed_in_user(request)

    def _launch(self, request: HttpRequest) -> tuple[LtiLaunch, User]:
        token = request.POST.get("picker") or request.GET.get("picker") or ""
        self.state = picker_state.read(token) if token else None
        if self.state is None:
            return self._from_session(request)
        lti_launch = self.framed_by = picker_state.launch(request, self.state)
        if not lti_launch.is_deep_link_launch:
            raise LaunchRefused("no_deep_link", picker_state.AGAIN)
        return lti_launch, picker_state.user(self.state)

    def dispatch(self, request: HttpRequest, *args: object, **kwargs: object) -> HttpResponseBase:
        self.framed_by = None
        try:
            self.lti_launch, self.user = self._launch(request)
            response = super().dispatch(request, *args, **kwargs)
        except LaunchRefused as refusal:
            response = refused(request, refusal.code, refusal.message)
        except LtiException as error:
            response = refused(request, "deep_link", f"The exam picker was refused: {error}")
        if self.framed_by is not None and not hasattr(response, "_csp_config"):
            framing.allow_platform_frame(response, self.framed_by)  # readable in the frame
        return response

    def get(self, request: HttpRequest) -> HttpResponseBase:
        return self._page(request, errors=[])

    def post(self, request: HttpRequest) -> HttpResponseBase:
        versions = services.placeable_versions(user=self.user)
        version = next((v for v in versions if str(v.pk) == request.POST.get("version")), None)
        sittings = services.placeable_sittings(user=self.user, lti_launch=self.lti_launch)
        sitting = next((s for s in sittings if str(s.pk) == request.POST.get("sitting")), None)
        if version is None and sitting is None:
            return self._page(request, errors=["Choose a published assessment."], status=400)
        try:
            response = services.deep_link_response(
                lti_launch=self.lti_launch,
                user=self.user,
                version=version,
                title=request.POST.get("title", ""),
                launch_url=request.build_absolute_uri(reverse("lti:launch")),
                sitting=sitting,
            )
        except ValidationError as invalid:  # the sitting refuses the form (a title too long)
            return self._page(request, errors=invalid.messages, status=400)
        if self.state is not None:
            picker_state.spend(self.state)
        else:
            request.session.pop(DEEP_LINK_SESSION_KEY, None)
        page = render(request, "lti/deep_link_return.html", response)
        target = framing.origin_of(response["return_url"])
        return framing.allow_platform_frame(page, self.lti_launch, form_targets=[target or ""])

    def _page(
        self, request: HttpRequest, *, errors: list[str], status: int = 200
    ) -> HttpResponseBase:
        context = {
            "versions": services.placeable_versions(user=self.user),
            "sittings": services.placeable_sittings(user=self.user, lti_launch=self.lti_launch),
            "errors": errors,
            "picker": self.state.token if self.state else "",
        }
        page = render(request, "lti/deep_link.html", context, status=status)
        return framing.allow_platform_frame(page, self.lti_launch)


REGISTRATION_FAILED = (
    "Registration with the LMS did not succeed. Check the registration URL in the LMS and try "
    "again; your administrator can find the reason in the tool's log."
)
"""One message for every failed registration: an unreachable or refused address, a closed port,
a timeout and a bad answer look alike to the caller (no port scanner); the log says which."""


@method_decorator((xframe_options_exempt, never_cache), name="dispatch")
class DynamicRegistrationView(View):
    """LTI Dynamic Registration (``lti.dynamic_registration``): opened by the LMS with
    ``openid_configuration`` and ``registration_token``; answers a page saying what was
    registered (its script tells the LMS to close the registration window). Only for a
    signed-in administrator or a URL carrying a ``viva_token`` the tool issued; every fetch
    passes the outbound address guard."""

    def get(self, request: HttpRequest) -> HttpResponse:
        if not self._allowed(request):
            return refused(
                request,
                "registration_not_allowed",
                "Registering an LMS needs the registration URL your administrator issued, or "
                "an administrator signed in.",
            )
        url = request.GET.get("openid_configuration", "")
        if not url:
            return refused(request, "no_configuration", "The LMS sent no configuration.", 400)
        try:
            deployment = dynamic_registration.register(
                openid_configuration=url,
                registration_token=request.GET.get("registration_token", ""),
                base=request.build_absolute_uri("/").rstrip("/"),
            )
        except (
            dynamic_registration.RegistrationRefused,
            requests.RequestException,  # web.outbound.AddressRefused included
            ValueError,
            KeyError,
            TypeError,
        ) as error:
            reason = f"{url!r}: {type(error).__name__}: {error}"
            return refused(request, "registration", REGISTRATION_FAILED, 502, reason=reason)
        return render(request, "lti/registered.html", {"deployment": deployment})

    @staticmethod
    def _allowed(request: HttpRequest) -> bool:
        user = request.user
        if user.is_authenticated and getattr(user, "role", "") == Role.ADMIN:
            return True
        return dynamic_registration.registration_token_valid(request.GET.get("viva_token", ""))
