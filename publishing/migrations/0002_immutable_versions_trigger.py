"""Database triggers that refuse UPDATE and DELETE on published versions.

The model layer already refuses; on Postgres (every real deployment) the triggers also stop raw
SQL, so a published version cannot be changed by any code path. TRUNCATE (used only by test-suite
flushes) is a table operation and is not affected. The embedded SQLite database relies on the model
layer alone: SQLite's flush deletes row by row, which a trigger would refuse.
"""

from django.db import migrations

POSTGRES_FORWARD = """
CREATE OR REPLACE FUNCTION publishing_version_immutable() RETURNS trigger AS $$
BEGIN
  RAISE EXCEPTION 'published versions are immutable (% refused on %)', TG_OP, OLD.id
    USING ERRCODE = 'integrity_constraint_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER publishing_version_no_update BEFORE UPDATE ON publishing_publishedversion
  FOR EACH ROW EXECUTE FUNCTION publishing_version_immutable();
CREATE TRIGGER publishing_version_no_delete BEFORE DELETE ON publishing_publishedversion
  FOR EACH ROW EXECUTE FUNCTION publishing_version_immutable();
"""
POSTGRES_BACKWARD = """
DROP TRIGGER IF EXISTS publishing_version_no_update ON publishing_publishedversion;
DROP TRIGGER IF EXISTS publishing_version_no_delete ON publishing_publishedversion;
DROP FUNCTION IF EXISTS publishing_version_immutable();
"""


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        # A plain cursor: no parameter interpolation, so the '%' placeholders of RAISE survive.
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(POSTGRES_FORWARD)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(POSTGRES_BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("publishing", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]
