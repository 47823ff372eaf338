from tests.marking.conftest import eager

__all__ = ["eager"]
