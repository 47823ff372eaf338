"""Storing a candidate's material for a session (issue #35, docs/spec/candidate-materials.md,
"Django side").

* :func:`material_kinds` reads which material kinds a published version's grounded nodes ask
  for (none: the sitting asks for no material).
* :func:`material_upload` checks and stores one file for one session (the candidate in the
  journey, staff in bulk, an integrator through the API), replacing the session's earlier
  material of that kind while the exam has not started.
* :func:`materials_bulk_upload` stores a zip of files named by candidate (username or email,
  any extension) for a sitting, one result line per entry; operating-system metadata
  (:func:`is_system_file`) is counted, not listed, a candidate named by two or more
  entries gets none of them, and an entry that cannot be read (encrypted, damaged, an
  unsupported compression method) gets a line saying so while the others are stored.

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
    ZIP_ERRORS,
    MaterialRefused,
    extract,
    read_entry,
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


SYSTEM_FOLDERS = frozenset(
    {
        "__macosx",
        ".spotlight-v100",
        ".trashes",
        ".fseventsd",
        ".temporaryitems",
        "$recycle.bin",
        "system volume information",
    }
)
"""Folders macOS and Windows write into archives (lower case): nothing in them is a file of a
candidate."""

SYSTEM_FILES = frozenset(
    {".ds_store", ".localized", ".apdisk", "icon\r", "thumbs.db", "ehthumbs.db", "desktop.ini"}
)
"""Metadata files macOS Finder and Windows Explorer leave in folders (lower case)."""


def is_system_file(name: str) -> bool:
    """Whether the archive entry ``name`` (a ``/`` path) is operating-system metadata rather than
    a candidate's file: anything in a system folder (``__MACOSX/``), an AppleDouble file
    (``._<name>``), or a metadata file (``.DS_Store``, ``Thumbs.db``, ``desktop.ini``); folder
    and file names are compared without regard to case."""
    *folders, base = name.split("/")
    return (
        base.startswith("._")
        or base.lower() in SYSTEM_FILES
        or any(folder.lower() in SYSTEM_FOLDERS for folder in folders)
    )


@dataclass(frozen=True, slots=True)
class BulkLine:
    """One entry of a bulk upload: its name, whom it was for, and what happened."""

    entry: str
    candidate: str
    stored: bool
    message: str


@dataclass(frozen=True, slots=True)
class BulkUpload:
    """What a bulk upload did: a line per entry in the ZIP's order, and how many entries were
    operating-system metadata (:func:`is_system_file`), skipped without a line."""

    lines: tuple[BulkLine, ...]
    system_files: int


@dataclass(frozen=True, slots=True)
class _Entry:
    """A file of the bulk ZIP, the name it was looked up by, and its candidate's session."""

    info: zipfile.ZipInfo
    name: str
    stem: str
    session: ExamSession | None


def _session_for(sitting: Sitting, stem: str) -> ExamSession | None:
    """The newest session in ``sitting`` of the candidate whose username or email is ``stem``."""
    named = Q(candidate__username__iexact=stem) | Q(candidate__email__iexact=stem)
    sessions = sitting.sessions.select_related("candidate")
    return sessions.filter(named, is_preview=False).order_by("-attempt").first()


def materials_bulk_upload(
    *, sitting: Sitting, kind: str, data: bytes, uploaded_by: User
) -> BulkUpload:
    """Store each file of the zip ``data`` as the material of the candidate it is named after
    (``<username or email>.<ext>``, in any folder); every entry gets a line, stored or why not,
    except operating-system metadata (``__MACOSX/``, ``.DS_Store``, ``Thumbs.db``, ...), which
    is only counted. When two or more entries are for one candidate none of them is stored
    (which one they meant is unknown) and each one's line names them all; the candidate's
    earlier material stays. An entry that cannot be read (``read_entry``: encrypted, damaged,
    an unsupported compression method) is not stored and its line says why; the other entries
    are handled as usual. A zip that cannot be opened raises ``MaterialRefused``: not a ZIP
    at all, or damaged (its directory unreadable)."""
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise MaterialRefused(_("The bulk upload must be a ZIP file."))
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except ZIP_ERRORS as error:
        raise MaterialRefused(
            _("The %(type)s file is damaged and cannot be read.") % {"type": "ZIP"}
        ) from error
    if len(infos) > MAX_ARCHIVE_ENTRIES:
        raise MaterialRefused(_("The ZIP file has too many files."))
    with archive:
        entries, system_files = _candidate_entries(infos, sitting)
        together = _names_per_session(entries)
        lines = [_bulk_entry(archive, entry, together, kind, uploaded_by) for entry in entries]
    return BulkUpload(tuple(lines), system_files)


def _candidate_entries(infos: list[zipfile.ZipInfo], sitting: Sitting) -> tuple[list[_Entry], int]:
    """The regular files (``safe_entry_name``) that are not operating-system metadata, in the
    ZIP's order, each with the session of the candidate its name (without folders and
    extension) names; and how many were operating-system metadata."""
    entries = []
    system_files = 0
    for info in infos:
        name = safe_entry_name(info)
        if name is None:
            continue
        if is_system_file(name):
            system_files += 1
            continue
        stem = posixpath.splitext(posixpath.basename(name))[0]
        entries.append(_Entry(info, name, stem, _session_for(sitting, stem)))
    return entries, system_files


def _names_per_session(entries: list[_Entry]) -> dict[object, list[str]]:
    """The entry names found for each session (its primary key), in the ZIP's order."""
    names: dict[object, list[str]] = {}
    for entry in entries:
        if entry.session is not None:
            names.setdefault(entry.session.pk, []).append(entry.name)
    return names


def _bulk_entry(
    archive: zipfile.ZipFile,
    entry: _Entry,
    together: dict[object, list[str]],
    kind: str,
    uploaded_by: User,
) -> BulkLine:
    """Store one entry of a bulk upload for the candidate it names, unless it names nobody of
    the sitting, another entry names the same candidate, or it cannot be read from the ZIP or
    as material (the line then says why)."""
    session = entry.session
    if session is None:
        return BulkLine(
            entry.name, entry.stem, False, _("No candidate of this sitting has this name.")
        )
    username = session.candidate.username
    names = together[session.pk]
    if len(names) > 1:
        clash = _("Two or more files in the ZIP are for this candidate: %(files)s.")
        return BulkLine(entry.name, username, False, clash % {"files": ", ".join(names)})
    try:
        data = read_entry(archive, entry.info, MAX_UPLOAD_BYTES + 1)
        material_upload(
            session=session,
            kind=kind,
            filename=posixpath.basename(entry.name),
            data=data,
            uploaded_by=uploaded_by,
            source=CandidateMaterial.Source.STAFF_BULK,
        )
    except MaterialRefused as refused:
        return BulkLine(entry.name, username, False, refused.message)
    return BulkLine(entry.name, username, True, _("Stored."))
