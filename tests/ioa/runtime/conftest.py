from __future__ import annotations

import pytest

from tests.ioa.runtime.harness import Harness


@pytest.fixture
def h() -> Harness:
    return Harness()
