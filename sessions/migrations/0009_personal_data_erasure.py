"""Personal data erasure (``sessions.erasure``, docs/privacy.md).

* ``ExamSession.chain_version``: sessions stored so far keep version 1 (every field hashed in
  clear); sessions created from now on get version 2 (personal fields hashed as keyed seals,
  ``ioa.events.personal``), so their personal data can be erased while the chain verifies.
* ``SessionEvent.erased`` and :class:`PersonalDataErasure`, the record of each erasure.
* The immutability triggers (0002 on Postgres, 0007 on SQLite) are replaced by ones that still
  refuse every DELETE and every UPDATE, except one: an erasure in progress on this connection
  (Postgres: the transaction-local setting ``viva.erasure``; SQLite: the per-connection
  function ``viva_erasure()`` of ``sessions.sqlite_guard``) may set ``erased`` of a not yet
  erased event of the erasure's own session, once, changing no other column and no payload
  field but those whose seals it keeps, under an existing erasure record.
"""

import uuid

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

_KEPT = (
    "id",
    "session_id",
    "seq",
    "event_id",
    "type",
    "timestamp",
    "source",
    "correlation_id",
    "schema_version",
    "hash",
    "prev_hash",
    "recorded_at",
)

POSTGRES_FUNCTION = """
CREATE OR REPLACE FUNCTION exam_sessions_event_immutable() RETURNS trigger AS $$
DECLARE
  erasure text := NULLIF(current_setting('viva.erasure', true), '');
  swapped text[];
BEGIN
  IF TG_OP = 'UPDATE' AND erasure IS NOT NULL AND OLD.erased IS NULL
     AND NEW.erased ->> 'erasure' = erasure
     AND jsonb_typeof(NEW.erased -> 'seals') = 'object'
     AND (NEW_COLUMNS) IS NOT DISTINCT FROM (OLD_COLUMNS)
     AND EXISTS (SELECT 1 FROM exam_sessions_personaldataerasure e
                 WHERE e.id::text = erasure AND e.session_id = OLD.session_id) THEN
    swapped := ARRAY(SELECT jsonb_object_keys(NEW.erased -> 'seals'));
    IF (OLD.payload - swapped) = (NEW.payload - swapped) THEN
      RETURN NEW;
    END IF;
  END IF;
  RAISE EXCEPTION USING
    MESSAGE = 'stored events are immutable: ' || TG_OP || ' refused on event ' || OLD.id,
    ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
""".replace("NEW_COLUMNS", ", ".join(f"NEW.{c}" for c in _KEPT)).replace(
    "OLD_COLUMNS", ", ".join(f"OLD.{c}" for c in _KEPT)
)
POSTGRES_PREVIOUS = """
CREATE OR REPLACE FUNCTION exam_sessions_event_immutable() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION USING
    MESSAGE = 'stored events are immutable: ' || TG_OP || ' refused on event ' || OLD.id,
    ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
"""
SQLITE_UPDATE = """CREATE TRIGGER exam_sessions_event_no_update
    BEFORE UPDATE ON exam_sessions_sessionevent
    WHEN NOT (
      SAME_COLUMNS
      AND viva_erasure(OLD.erased, NEW.erased, OLD.payload, NEW.payload) = 1
      AND EXISTS (SELECT 1 FROM exam_sessions_personaldataerasure e
                  WHERE e.id = replace(json_extract(NEW.erased, '$.erasure'), '-', '')
                  AND e.session_id = OLD.session_id)
    )
    BEGIN SELECT RAISE(ABORT, 'stored events are immutable: UPDATE refused'); END""".replace(
    "SAME_COLUMNS", " AND ".join(f"NEW.{c} IS OLD.{c}" for c in _KEPT)
)
SQLITE_DELETE = """CREATE TRIGGER IF NOT EXISTS exam_sessions_event_no_delete
    BEFORE DELETE ON exam_sessions_sessionevent WHEN viva_log_flush() = 0
    BEGIN SELECT RAISE(ABORT, 'stored events are immutable: DELETE refused'); END"""
SQLITE_PREVIOUS = """CREATE TRIGGER exam_sessions_event_no_update
    BEFORE UPDATE ON exam_sessions_sessionevent
    BEGIN SELECT RAISE(ABORT, 'stored events are immutable: UPDATE refused'); END"""


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_FUNCTION)
    elif vendor == "sqlite":
        schema_editor.execute("DROP TRIGGER IF EXISTS exam_sessions_event_no_update")
        schema_editor.execute(SQLITE_UPDATE)
        schema_editor.execute(SQLITE_DELETE)  # in case adding the column rebuilt the table


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(POSTGRES_PREVIOUS)
    elif vendor == "sqlite":
        schema_editor.execute("DROP TRIGGER IF EXISTS exam_sessions_event_no_update")
        schema_editor.execute(SQLITE_PREVIOUS)


class Migration(migrations.Migration):
    dependencies = [
        ("exam_sessions", "0008_preview_sessions"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AddField(
            model_name="examsession",
            name="chain_version",
            field=models.PositiveSmallIntegerField(default=1, editable=False),
        ),
        migrations.AlterField(
            model_name="examsession",
            name="chain_version",
            field=models.PositiveSmallIntegerField(default=2, editable=False),
        ),
        migrations.AddField(
            model_name="examsession",
            name="erased_at",
            field=models.DateTimeField(blank=True, editable=False, null=True),
        ),
        migrations.AddField(
            model_name="sessionevent",
            name="erased",
            field=models.JSONField(blank=True, editable=False, null=True),
        ),
        migrations.CreateModel(
            name="PersonalDataErasure",
            fields=[
                (
                    "id",
                    models.UUIDField(
                        default=uuid.uuid4, editable=False, primary_key=True, serialize=False
                    ),
                ),
                (
                    "kind",
                    models.CharField(
                        choices=[("request", "on request"), ("retention", "retention period over")],
                        max_length=16,
                    ),
                ),
                ("reason", models.TextField()),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                ("counts", models.JSONField(default=dict)),
                (
                    "requested_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "session",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.PROTECT,
                        related_name="erasures",
                        to="exam_sessions.examsession",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at"],
            },
        ),
        migrations.RunPython(forward, backward),
    ]
