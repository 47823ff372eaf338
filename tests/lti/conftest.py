from typing import Any

import pytest

from tests.conftest import LOOPBACK
from tests.marking.conftest import eager

__all__ = ["eager", "peers_on_loopback"]


@pytest.fixture(autouse=True)
def peers_on_loopback(settings: Any) -> None:
    """The LTI tests' platforms run on 127.0.0.1: the tool's fetches (keyset, token, services,
    registration) may reach them (web/outbound.py). Tests of the guard set the list empty."""
    settings.VIVA_OUTBOUND_ALLOWED_NETWORKS = LOOPBACK
