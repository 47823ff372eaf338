"""Editing stored rows the way someone with database access could (triggers off)."""

from __future__ import annotations

import uuid
from importlib import import_module

from django.db import connection

from sessions.models import ExamSession

SQLITE_TRIGGERS = import_module("sessions.migrations.0007_immutable_events_sqlite")
SQLITE_ERASURE = import_module("sessions.migrations.0009_personal_data_erasure")


def tamper(sql: str, params: list[object]) -> None:
    """Run ``sql`` with the immutability triggers off: a Postgres superuser switches them off
    for the session; whoever can write the SQLite file drops and re-creates them."""
    field = ExamSession._meta.pk
    params = [
        field.get_db_prep_value(p, connection) if isinstance(p, uuid.UUID) else p for p in params
    ]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET session_replication_role = replica")
        else:
            for statement in SQLITE_TRIGGERS.SQLITE_BACKWARD:
                cursor.execute(statement)
        cursor.execute(sql, params)
        if connection.vendor == "postgresql":
            cursor.execute("SET session_replication_role = origin")
        else:
            cursor.execute(SQLITE_ERASURE.SQLITE_UPDATE)  # the latest triggers (0009)
            cursor.execute(SQLITE_ERASURE.SQLITE_DELETE)
