"""Database triggers that refuse UPDATE and DELETE on stored events (Postgres).

The model layer already refuses; the triggers also stop raw SQL, so the log is append-only for
every code path. TRUNCATE (test-suite flushes) is unaffected. Anyone able to disable triggers
can still edit rows: that is what the hash chain and ``verify_session_log`` catch.
"""

from django.db import migrations

POSTGRES_FORWARD = """
CREATE OR REPLACE FUNCTION exam_sessions_event_immutable() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION USING
    MESSAGE = 'stored events are immutable: ' || TG_OP || ' refused on event ' || OLD.id,
    ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER exam_sessions_event_no_update BEFORE UPDATE ON exam_sessions_sessionevent
  FOR EACH ROW EXECUTE FUNCTION exam_sessions_event_immutable();
CREATE TRIGGER exam_sessions_event_no_delete BEFORE DELETE ON exam_sessions_sessionevent
  FOR EACH ROW EXECUTE FUNCTION exam_sessions_event_immutable();
"""
POSTGRES_BACKWARD = """
DROP TRIGGER IF EXISTS exam_sessions_event_no_update ON exam_sessions_sessionevent;
DROP TRIGGER IF EXISTS exam_sessions_event_no_delete ON exam_sessions_sessionevent;
DROP FUNCTION IF EXISTS exam_sessions_event_immutable();
"""


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_FORWARD)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(POSTGRES_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("exam_sessions", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]
