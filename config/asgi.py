"""ASGI entry point: HTTP through Django, WebSockets through Channels.

Daphne passes every request body to Django as sent (``config.daphne_http``: Twisted does not
parse forms first). WebSocket connections authenticate with the HTTP session cookie and are
refused unless their Origin matches exactly (scheme, host, port; ``config.ws_origin``) at the
handshake.
"""

import os

from django.core.asgi import get_asgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
django_asgi_app = get_asgi_application()

from channels.auth import AuthMiddlewareStack  # noqa: E402
from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from bot.warmup import warm_on_start  # noqa: E402
from config.daphne_http import install as install_body_passing_requests  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402
from config.ws_origin import ExactOriginValidator  # noqa: E402

# Check the speech providers now. With inline bots the web process serves voice: load the voice
# dependencies in the background, so the first candidate's offer does not wait for them; with
# Celery bots the workers load them instead (bot.warmup).
warm_on_start(hosts_bots=settings.VIVA_BOT_RUNNER == "inline")
install_body_passing_requests()

application = ProtocolTypeRouter(
    {
        "http": django_asgi_app,
        "websocket": ExactOriginValidator(AuthMiddlewareStack(URLRouter(websocket_urlpatterns))),
    }
)
