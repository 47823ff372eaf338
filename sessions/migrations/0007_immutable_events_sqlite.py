"""The append-only event log on SQLite too: triggers refuse UPDATE and DELETE of stored events.

Like Postgres' triggers (0002) they stop raw SQL as well as the ORM. Postgres lets TRUNCATE
through (test-suite flushes); SQLite has no TRUNCATE, so the DELETE trigger lets rows go only
while Django's own flush runs on that connection (``viva_log_flush()``, a function registered
per connection by ``sessions.sqlite_guard``; a connection without it, e.g. the sqlite3 shell,
cannot delete events at all). Anyone able to drop triggers can still edit the file: that is
what the hash chain and the head anchors (``sessions.chain_anchor``) catch.
"""

from django.db import migrations

SQLITE_FORWARD = [
    """CREATE TRIGGER IF NOT EXISTS exam_sessions_event_no_update
    BEFORE UPDATE ON exam_sessions_sessionevent
    BEGIN SELECT RAISE(ABORT, 'stored events are immutable: UPDATE refused'); END""",
    """CREATE TRIGGER IF NOT EXISTS exam_sessions_event_no_delete
    BEFORE DELETE ON exam_sessions_sessionevent WHEN viva_log_flush() = 0
    BEGIN SELECT RAISE(ABORT, 'stored events are immutable: DELETE refused'); END""",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS exam_sessions_event_no_update",
    "DROP TRIGGER IF EXISTS exam_sessions_event_no_delete",
]


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE_FORWARD:
            schema_editor.execute(statement)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        for statement in SQLITE_BACKWARD:
            schema_editor.execute(statement)


class Migration(migrations.Migration):
    dependencies = [("exam_sessions", "0006_candidate_inbox")]
    operations = [migrations.RunPython(forward, backward)]
