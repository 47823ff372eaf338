"""Reading a candidate's uploaded material as plain text (issue #35,
docs/spec/candidate-materials.md, "Django side").

:func:`extract` takes the uploaded bytes and returns an :class:`Extracted` (the detected type
and the text) or raises :class:`MaterialRefused` whose ``message`` names what is wrong (too
large, wrong type, an encrypted PDF, no text, a damaged file). The type is decided by the
content, never by the file name alone:

* ``pdf``: the bytes start with ``%PDF-``; read with pypdf, page by page (at most
  :data:`MAX_PDF_PAGES`); an encrypted PDF that does not open with an empty password is refused.
* ``docx``: a zip holding ``word/document.xml``; read with python-docx (paragraphs and table
  cells), after the archive passed the same bomb checks as a code archive.
* ``archive``: any other zip: a code archive. The text of its source files (by extension,
  :data:`SOURCE_SUFFIXES`) in name order, each under a ``File: <path>`` line. Nothing is
  written to disk; entries with absolute paths, ``..`` parts or links are skipped; each entry
  is read through a bounded stream (its declared size is not trusted), and the archive is
  refused when its entries or its declared uncompressed size exceed the bounds, or when a
  source file in it cannot be read (:func:`read_entry`: encrypted, damaged, or compressed by a
  method zipfile cannot read), naming the file and why.
* ``text``: UTF-8 text (Markdown or plain; a byte-order mark is dropped) with no NUL byte.

The text is cut at :data:`MAX_TEXT_CHARS` (the runtime reads no further) and can always be
stored: NUL characters are dropped and lone surrogates become U+FFFD (pypdf can read either out
of a PDF; PostgreSQL's text holds neither).
"""

from __future__ import annotations

import io
import lzma
import posixpath
import stat
import struct
import zipfile
import zlib
from dataclasses import dataclass
from typing import Final

from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext_lazy

from ioa.materials import MAX_MATERIAL_CHARS

MAX_UPLOAD_BYTES: Final = 10 * 1024 * 1024
"""The largest file accepted (10 MB)."""
MAX_TEXT_CHARS: Final = MAX_MATERIAL_CHARS
MAX_PDF_PAGES: Final = 300
MAX_ARCHIVE_ENTRIES: Final = 2000
MAX_ARCHIVE_UNCOMPRESSED: Final = 50 * 1024 * 1024
"""The declared uncompressed size of a zip (a DOCX or a code archive) must stay under this."""
MAX_SOURCE_BYTES: Final = 2 * 1024 * 1024
"""The source text read from a code archive in total; the rest is left out."""
MAX_RATIO: Final = 200
"""An entry that claims to expand more than this from its compressed size is a bomb."""
SOURCE_SUFFIXES: Final = frozenset(
    {
        ".py",
        ".ipynb",
        ".java",
        ".kt",
        ".scala",
        ".c",
        ".h",
        ".cc",
        ".cpp",
        ".hpp",
        ".cs",
        ".go",
        ".rs",
        ".rb",
        ".php",
        ".js",
        ".jsx",
        ".ts",
        ".tsx",
        ".swift",
        ".m",
        ".r",
        ".jl",
        ".hs",
        ".ml",
        ".sql",
        ".sh",
        ".html",
        ".css",
        ".md",
        ".txt",
        ".rst",
        ".toml",
        ".yaml",
        ".yml",
        ".json",
        ".xml",
        ".gradle",
        ".cmake",
        ".mk",
    }
)
ZIP_ERRORS: Final = (
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    struct.error,
    EOFError,
    NotImplementedError,
    RuntimeError,
    OSError,
    ValueError,
)
"""What ``zipfile`` and its decompressors raise on a zip or an entry that is damaged (bad
headers, a bad CRC-32, data that does not inflate, a truncated stream), encrypted (RuntimeError)
or made in a way it cannot read (NotImplementedError: a compression method, a ZIP version)."""
_ENCRYPTED_FLAGS: Final = 0x0001 | 0x0040
"""General purpose flag bits of an encrypted entry (traditional and strong encryption)."""
ACCEPTED_TYPES: Final = ("pdf", "docx", "text", "archive")
ACCEPTED_SUFFIXES: Final = ".pdf, .docx, .md, .txt, .zip"


class MaterialRefused(Exception):
    """The upload cannot be used; ``message`` says why in words a candidate understands."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


@dataclass(frozen=True, slots=True)
class Extracted:
    """What :func:`extract` read: the detected type and the plain text (at most
    :data:`MAX_TEXT_CHARS` characters)."""

    file_type: str
    text: str


def extract(data: bytes) -> Extracted:
    """Detect the type of ``data`` by its content and read its text (see the module
    docstring); raises :class:`MaterialRefused` naming what is wrong."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise MaterialRefused(
            str(_("The file is too large: at most %(mb)d MB.") % {"mb": MAX_UPLOAD_BYTES >> 20})
        )
    if not data:
        raise MaterialRefused(str(_("The file is empty.")))
    if data.startswith(b"%PDF-"):
        file_type, text = "pdf", _pdf_text(data)
    elif data.startswith(b"PK\x03\x04"):
        file_type, text = _zip_text(data)
    else:
        file_type, text = "text", _plain_text(data)
    text = _storable(text).strip()[:MAX_TEXT_CHARS]
    if not text:
        raise MaterialRefused(str(_NO_TEXT[file_type]))
    return Extracted(file_type=file_type, text=text)


_NO_TEXT = {
    "pdf": _("The PDF has no text to read (a scanned document?). Upload a PDF with text."),
    "docx": _("The Word document has no text."),
    "archive": _("The archive has no source or text files."),
    "text": _("The file has no text."),
}


def _storable(text: str) -> str:
    """``text`` without NUL characters and with each lone surrogate replaced by U+FFFD (neither
    can be stored in PostgreSQL's text)."""
    text = text.replace("\x00", "")
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _wrong_type() -> MaterialRefused:
    return MaterialRefused(
        str(
            _("This type of file cannot be read. Accepted: %(types)s.")
            % {"types": ACCEPTED_SUFFIXES}
        )
    )


def _pdf_text(data: bytes) -> str:
    """The text of every page of a PDF (refused: encrypted, damaged, too many pages)."""
    import pypdf  # here, not at the top: see _docx_text

    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted and not reader.decrypt(""):
            raise MaterialRefused(
                str(_("The PDF is encrypted (password-protected). Upload it without a password."))
            )
        if len(reader.pages) > MAX_PDF_PAGES:
            raise MaterialRefused(
                str(
                    ngettext_lazy(
                        "The PDF has too many pages: at most %(pages)d page.",
                        "The PDF has too many pages: at most %(pages)d pages.",
                        MAX_PDF_PAGES,
                    )
                    % {"pages": MAX_PDF_PAGES}
                )
            )
        pages = (page.extract_text() or "" for page in reader.pages)
        return "\n\n".join(page for page in pages if page.strip())
    except MaterialRefused:
        raise
    except Exception as error:  # pypdf raises many kinds on a damaged file
        raise _damaged("PDF") from error


def _damaged(what: str) -> MaterialRefused:
    return MaterialRefused(
        str(_("The %(type)s file is damaged and cannot be read.") % {"type": what})
    )


def _plain_text(data: bytes) -> str:
    """UTF-8 text without NUL bytes (anything else is not a text file)."""
    if b"\x00" in data:
        raise _wrong_type()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise MaterialRefused(
            str(_("The text file is not UTF-8 encoded. Save it as UTF-8 and upload it again."))
        ) from error


def _zip_text(data: bytes) -> tuple[str, str]:
    """A DOCX's or a code archive's text, after the bomb checks."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = archive.namelist()
    except ZIP_ERRORS as error:
        raise _damaged("ZIP") from error
    with archive:
        _check_bomb(archive)
        if "word/document.xml" in names:
            return "docx", _docx_text(data)
        return "archive", _archive_text(archive)


def _check_bomb(archive: zipfile.ZipFile) -> None:
    """Refuse too many entries, too much declared content, or an entry expanding too much."""
    infos = archive.infolist()
    total = sum(info.file_size for info in infos)
    bomb = any(info.file_size > MAX_RATIO * max(info.compress_size, 1) + 4096 for info in infos)
    if len(infos) > MAX_ARCHIVE_ENTRIES or total > MAX_ARCHIVE_UNCOMPRESSED or bomb:
        raise MaterialRefused(
            str(
                _("The archive is too large when unpacked: at most %(entries)d files, %(mb)d MB.")
                % {"entries": MAX_ARCHIVE_ENTRIES, "mb": MAX_ARCHIVE_UNCOMPRESSED >> 20}
            )
        )


def _docx_text(data: bytes) -> str:
    """Paragraphs, then table cells, of a Word document."""
    # python-docx and pypdf (with lxml under python-docx) are imported by the readers that use
    # them: every Django process imports this module (the exam room names it) and only an
    # upload reads a file (issue #36). A third-party library: no dependency of ours hidden.
    import docx

    try:
        document = docx.Document(io.BytesIO(data))
    except Exception as error:  # python-docx raises KeyError, ValueError, lxml errors ...
        raise _damaged("Word") from error
    lines = [p.text for p in document.paragraphs]
    for table in document.tables:
        for row in table.rows:
            lines.append(" | ".join(cell.text for cell in row.cells))
    return "\n\n".join(line for line in lines if line.strip())


def safe_entry_name(info: zipfile.ZipInfo) -> str | None:
    """The entry's path when it is a regular file inside the archive (None: a directory, a
    link, an absolute path, a ``..`` part, a drive letter or a backslash path)."""
    name = info.filename
    mode = info.external_attr >> 16
    if info.is_dir() or stat.S_ISLNK(mode) or "\\" in name or ":" in name:
        return None
    normal = posixpath.normpath(name)
    if name.startswith("/") or normal.startswith("..") or "/../" in f"/{name}/":
        return None
    return normal


def read_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, limit: int) -> bytes:
    """At most ``limit`` bytes of the entry ``info`` (its CRC-32 checked when it is read to the
    end). An entry that cannot be read raises :class:`MaterialRefused` naming it and why: it is
    encrypted (its flags say so; no password is tried), compressed by a method zipfile cannot
    read, or damaged (any other of :data:`ZIP_ERRORS`)."""
    encrypted = bool(info.flag_bits & _ENCRYPTED_FLAGS)
    try:
        if encrypted:
            raise RuntimeError(f"{info.filename} is encrypted")
        with archive.open(info) as stream:
            return stream.read(limit)
    except NotImplementedError as error:
        message = _(
            "The file %(name)s could not be read from the ZIP: it is compressed with a method"
            " that is not supported. Make the ZIP again with standard (Deflate) compression."
        )
        raise MaterialRefused(str(message % {"name": info.filename})) from error
    except ZIP_ERRORS as error:
        if encrypted:
            message = _(
                "The file %(name)s could not be read from the ZIP: it is encrypted"
                " (password-protected). Make the ZIP without a password."
            )
        else:
            message = _(
                "The file %(name)s could not be read from the ZIP: it is damaged. Make the ZIP"
                " again."
            )
        raise MaterialRefused(str(message % {"name": info.filename})) from error


def _archive_text(archive: zipfile.ZipFile) -> str:
    """Each source file's text under a ``File:`` line, in name order, bounded in total."""
    parts: list[str] = []
    budget = MAX_SOURCE_BYTES
    for info in sorted(archive.infolist(), key=lambda i: i.filename):
        name = safe_entry_name(info)
        if name is None or posixpath.splitext(name)[1].lower() not in SOURCE_SUFFIXES:
            continue
        if budget <= 0:
            break
        raw = read_entry(archive, info, budget + 1)[:budget]
        budget -= len(raw)
        if b"\x00" not in raw:
            parts.append(f"File: {name}\n{raw.decode('utf-8', errors='replace')}")
    return "\n\n".join(parts)
