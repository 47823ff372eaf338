from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "accounts"
    verbose_name = "Accounts and roles"

    def ready(self) -> None:
        from django.contrib.auth.signals import user_logged_in, user_login_failed

        from accounts import (
            area_checks,  # noqa: F401  (registers the view-area system check)
            login_throttle,
            sso,  # noqa: F401  (registers the single sign-on system check)
        )

        user_login_failed.connect(login_throttle.on_login_failed, dispatch_uid="viva-login-failed")
        user_logged_in.connect(login_throttle.on_logged_in, dispatch_uid="viva-logged-in")
