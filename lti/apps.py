from django.apps import AppConfig


class LtiConfig(AppConfig):
    name = "lti"
    verbose_name = "LTI 1.3 (LMS integration)"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from pylti1p3 import message_launch, service_connector

        from lti import erasure, receivers
        from web.outbound import route_library_through_guard

        # The platform's keyset (launches), token endpoint and AGS/NRPS services are URLs the
        # platform names: pylti1p3 fetches them through the outbound address guard.
        route_library_through_guard(message_launch)
        route_library_through_guard(service_connector)
        erasure.connect()  # sessions.signals.personal_data_erased: the passbacks' texts
        receivers.connect()  # grade sync when marks are locked and results released
