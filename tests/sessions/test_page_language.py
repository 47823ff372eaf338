"""The language of a candidate's pages comes from the package's ``metadata.language`` alone."""

from __future__ import annotations

import json

import pytest

from sessions.exam_room import page_language
from tests.sessions.factories import ExamSessionFactory

pytestmark = pytest.mark.django_db


def _session_with(document: object) -> object:
    session = ExamSessionFactory()
    version = session.sitting.version
    version.canonical_json = json.dumps(document)
    version.checksum = "sha256:" + str(hash(version.canonical_json) & 0xFFFF).zfill(64)
    return session


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ({"metadata": {"language": "de-DE"}}, "de"),
        ({"metadata": {"language": "es"}}, "es"),
        ({"metadata": {}}, "en"),
        ({}, "en"),
        ([], "en"),
        ({"metadata": {"language": "tlh"}}, "en"),  # unsupported: the site's default, logged
    ],
)
def test_the_page_language_is_read_from_the_package_metadata_only(
    document: object, expected: str
) -> None:
    """Nothing else in the package is read: a page never fails on an unrelated field."""
    assert page_language(_session_with(document)) == expected
