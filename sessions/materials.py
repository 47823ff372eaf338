"""Storing a candidate's material for a session (issue #35, docs/spec/candidate-materials.md,
"Django side").

* :func:`material_kinds` reads which material kinds a published version's grounded nodes ask
  for (none: the sitting asks for no material).
* :func:`material_upload` checks and stores one file for one session (the candidate in the
  journey, staff in bulk, an integrator through the API), replacing the session's earlier
  material of that kind while the exam has not started.
* :func:`materials_bulk_upload` stores a zip of files named by candidate (username or email,
  any extension) for a sitting, one result line per entry.

Refusals raise :class:`~sessions.material_text.MaterialRefused` with a message that names what
is wrong; nothing is stored then.
"""

from __future__ import annotations

import functools
import hashlib
import io
import json
import posixpath
import zipfile
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Q
from django.utils.translation import gettext as _

from accounts.models import User
from ioa.events import ExamState
from publishing.models import PublishedVersion
from sessions.material_text import (
    MAX_ARCHIVE_ENTRIES,
    MAX_UPLOAD_BYTES,
    MaterialRefused,
    extract,
    safe_entry_name,
)
from sessions.models import CandidateMaterial, ExamSession, Sitting


def material_kinds(version: PublishedVersion) -> list[str]:
    """The material kinds (``submission``, ``report``) the version's grounded nodes read, in
    node order without repeats (cached: a published version never changes)."""
    return list(_kinds(version.pk, version.canonical_json))


@functools.lru_cache(maxsize=256)
def _kinds(version_id: object, canonical_json: str) -> tuple[str, ...]:
    package = json.loads(canonical_json)
    kinds: list[str] = []
    for node in package.get("nodes", []):
        grounding = node.get("grounding") if isinstance(node, dict) else None
        if isinstance(grounding, dict):
            kind = str(grounding.get("material") or "submission")
            if kind not in kinds:
                kinds.append(kind)
    return tuple(kinds)


def materials_missing(session: ExamSession) -> list[str]:
    """The material kinds the session's exam asks for and the session has not got yet."""
    kinds = material_kinds(session.sitting.version)
    if not kinds:
        return []
    stored = set(CandidateMaterial.objects.filter(session=session).values_list("kind", flat=True))
    return [kind for kind in kinds if kind not in stored]


def _check_open(session: ExamSession, kind: str) -> None:
    """Refuse when the session takes no material of ``kind`` now (asked for by no grounded node,
    the exam started, or the session erased)."""
    if kind not in material_kinds(session.sitting.version):
        raise MaterialRefused(_("This exam does not ask for this kind of material."))
    if session.erased_at is not None or session.state != ExamState.SCHEDULED.value:
        raise MaterialRefused(_("The exam has started: the material can no longer be changed."))


def material_upload(
    *,
    session: ExamSession,
    kind: str,
    filename: str,
    data: bytes,
    uploaded_by: User | None,
    source: str,
) -> CandidateMaterial:
    """Read ``data`` (``sessions.material_text.extract``) and store it as the session's
    material of ``kind``, replacing an earlier one; raises ``MaterialRefused`` (nothing stored)
    when the file cannot be read or the session takes no material now."""
    extracted = extract(data)
    with transaction.atomic():
        locked = ExamSession.objects.select_for_update().select_related("sitting__version")
        locked_session = locked.get(pk=session.pk)
        _check_open(locked_session, kind)
        CandidateMaterial.objects.filter(session=locked_session, kind=kind).delete()
        return CandidateMaterial.objects.create(
            session=locked_session,
            kind=kind,
            file_type=extracted.file_type,
            filename=posixpath.basename(filename.replace("\\", "/"))[:255],
            original=data,
            size=len(data),
            sha256=hashlib.sha256(data).hexdigest(),
            text=extracted.text,
            text_sha256=hashlib.sha256(extracted.text.encode()).hexdigest(),
            source=source,
            uploaded_by=uploaded_by,
        )


@dataclass(frozen=True, slots=True)
class BulkLine:
    """One entry of a bulk upload: its name, whom it was for, and what happened."""

    entry: str
    candidate: str
    stored: bool
    message: str


def _session_for(sitting: Sitting, stem: str) -> ExamSession | None:
    """The newest session in ``sitting`` of the candidate whose username or email is ``stem``."""
    named = Q(candidate__username__iexact=stem) | Q(candidate__email__iexact=stem)
    return sitting.sessions.filter(named, is_preview=False).order_by("-attempt").first()


def materials_bulk_upload(
    *, sitting: Sitting, kind: str, data: bytes, uploaded_by: User
) -> list[BulkLine]:
    """Store each file of the zip ``data`` as the material of the candidate it is named after
    (``<username or email>.<ext>``); every entry gets a line, stored or why not. A zip that
    cannot be opened raises ``MaterialRefused``."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        raise MaterialRefused(_("The bulk upload must be a ZIP file.")) from error
    if len(infos) > MAX_ARCHIVE_ENTRIES:
        raise MaterialRefused(_("The ZIP file has too many files."))
    lines = []
    with archive:
        for info in infos:
            name = safe_entry_name(info)
            if name is None:
                continue
            lines.append(_bulk_entry(archive, info, name, sitting, kind, uploaded_by))
    return lines


def _bulk_entry(
    archive: zipfile.ZipFile,
    info: zipfile.ZipInfo,
    name: str,
    sitting: Sitting,
    kind: str,
    uploaded_by: User,
) -> BulkLine:
    """Store one entry of a bulk upload for the candidate it names."""
    stem = posixpath.splitext(posixpath.basename(name))[0]
    session = _session_for(sitting, stem)
    if session is None:
        return BulkLine(name, stem, False, _("No candidate of this sitting has this name."))
    with archive.open(info) as stream:
        data = stream.read(MAX_UPLOAD_BYTES + 1)
    try:
        material_upload(
            session=session,
            kind=kind,
            filename=posixpath.basename(name),
            data=data,
            uploaded_by=uploaded_by,
            source=CandidateMaterial.Source.STAFF_BULK,
        )
    except MaterialRefused as refused:
        return BulkLine(name, session.candidate.username, False, refused.message)
    return BulkLine(name, session.candidate.username, True, _("Stored."))
