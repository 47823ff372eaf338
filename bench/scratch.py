"""What the Postgres benchmarks share: a throw-away database and a sitting to put sessions in.

Import after ``django.setup()``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def scratch_database(suffix: str) -> Iterator[str]:
    """Create ``test_<name>_<suffix>`` with migrations, use it, and drop it at the end (after
    the pending broadcasts are flushed); yields its name."""
    from django.conf import settings
    from django.db import connection

    from sessions import broadcast

    db = settings.DATABASES["default"]
    db.setdefault("TEST", {})["NAME"] = f"test_{db['NAME']}_{suffix}"
    test_name = connection.creation.create_test_db(verbosity=0, autoclobber=True)
    try:
        yield str(test_name)
    finally:
        broadcast.flush(5)
        connection.close()
        with connection._nodb_cursor() as cursor:  # a server's backend may linger: end it
            cursor.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = %s AND pid <> pg_backend_pid()",
                [test_name],
            )
        connection.creation.destroy_test_db(test_name, verbosity=0)


def bench_sitting(author: Any) -> Any:
    """A sitting of a stub published version of ``author`` (no package: the benchmarks append
    events directly, nothing compiles or validates it)."""
    from authoring.models import DraftPackage
    from publishing.models import PublishedVersion
    from sessions.models import Sitting

    draft = DraftPackage.objects.create(owner=author, title="bench", document={})
    version = PublishedVersion.objects.create(
        draft=draft,
        number=1,
        package_id="bench",
        title="bench",
        ir_version="ioa-orm/0.2",
        adapter_version="bench",
        canonical_json="{}",
        checksum="sha256:" + "0" * 64,
        compiled_json="{}",
        validation_report={},
        published_by=author,
    )
    return Sitting.objects.create(version=version, title="bench", created_by=author)
