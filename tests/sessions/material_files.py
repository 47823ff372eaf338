"""Small candidate materials built in the test: a PDF with text (hand-written PDF syntax, read
by pypdf), an encrypted PDF, a PDF whose text pypdf reads with a lone surrogate, a DOCX
(python-docx) and zip archives, and entries of a zip made unreadable (encrypted, damaged, an
unsupported compression method: ``unreadable_entry``); and a package whose second node is
grounded on the candidate's report (``grounded_package``)."""

from __future__ import annotations

import io
import json
import struct
import zipfile
from typing import Literal

import docx
import pypdf

from tests.factories import example_document

GROUNDING = {"material": "report", "pick": "choice", "fallbackQuestion": "Tell me a decision."}

REPORT_LINES = (
    "Route planner project report.",
    "We chose Dijkstra's algorithm instead of Bellman-Ford because all edge weights are positive.",
    "Our results show the planner answers a query in 40 ms on the city graph.",
    "However, the planner does not handle roads that close during the day.",
)


def pdf_bytes(lines: tuple[str, ...] = REPORT_LINES) -> bytes:
    """A one-page PDF whose text is ``lines`` (one text line each)."""
    escaped = [line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") for line in lines]
    shows = " ".join(f"({line}) Tj 0 -16 Td" for line in escaped)
    return _pdf(f"BT /F1 10 Tf 40 760 Td {shows} ET".encode())


SURROGATE_CMAP = (
    b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap /CMapName /X def"
    b" 1 begincodespacerange <00> <FF> endcodespacerange"
    b" 2 beginbfchar <41> <D800> <42> <0042> endbfchar endcmap"
    b" CMapName currentdict /CMap defineresource pop end end"
)
"""A ToUnicode map sending ``A`` to the lone surrogate U+D800 and ``B`` to ``B``."""


def surrogate_pdf_bytes(text: str) -> bytes:
    """A PDF whose text is ``text`` where pypdf reads each ``A`` as the lone surrogate U+D800
    (its font's ToUnicode map says so), which no UTF-8 text column can hold."""
    content = f"BT /F1 10 Tf 40 760 Td ({text}) Tj ET".encode()
    return _pdf(content, font=b" /ToUnicode 6 0 R", extra=(_stream(SURROGATE_CMAP),))


def _stream(data: bytes) -> bytes:
    return b"<< /Length %d >>\nstream\n" % len(data) + data + b"\nendstream"


def _pdf(content: bytes, *, font: bytes = b"", extra: tuple[bytes, ...] = ()) -> bytes:
    """A one-page PDF showing ``content`` in Helvetica (``font``: more font keys; ``extra``:
    objects numbered from 6)."""
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        _stream(content),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica" + font + b" >>",
        *extra,
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(
        b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    )
    return out.getvalue()


def encrypted_pdf_bytes() -> bytes:
    """The report PDF, encrypted with a user password."""
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(io.BytesIO(pdf_bytes())))
    writer.encrypt(user_password="secret", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def docx_bytes(lines: tuple[str, ...] = REPORT_LINES) -> bytes:
    """A Word document with one paragraph per line."""
    document = docx.Document()
    for line in lines:
        document.add_paragraph(line)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def zip_bytes(
    entries: dict[str, bytes],
    *,
    compression: int = zipfile.ZIP_DEFLATED,
    stored: tuple[str, ...] = (),
) -> bytes:
    """A zip holding ``entries`` (name -> bytes), compressed with ``compression`` except the
    entries named in ``stored`` (kept uncompressed)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as archive:
        for name, data in entries.items():
            method = zipfile.ZIP_STORED if name in stored else compression
            archive.writestr(name, data, compress_type=method)
    return out.getvalue()


Unreadable = Literal["encrypted", "damaged", "method", "version"]

UNSUPPORTED_METHOD = 99
"""The compression method WinZip's AES encryption writes; Python's zipfile cannot read it."""


def unreadable_entry(data: bytes, name: str, how: Unreadable) -> bytes:
    """The zip ``data`` with its entry ``name`` made unreadable, ``how``:

    * ``encrypted``: the encryption flag (bit 0) set in its local and central headers
      (zipfile: RuntimeError "File ... is encrypted, password required for extraction");
    * ``damaged``: a stored entry gets one byte of its data flipped (zipfile: "Bad CRC-32"),
      a deflated one a first byte naming a reserved block type (zlib.error "invalid block type");
    * ``method``: compression method 99 in both headers (NotImplementedError);
    * ``version``: the central header says version 9.9 is needed to extract it (zipfile refuses
      the whole archive when it opens it: NotImplementedError "zip file version 9.9")."""
    patched = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.getinfo(name)
        local = info.header_offset
        central = _central_header(patched, archive.start_dir, name)
    if how == "encrypted":
        for flags in (local + 6, central + 8):
            struct.pack_into("<H", patched, flags, struct.unpack_from("<H", patched, flags)[0] | 1)
    elif how == "method":
        struct.pack_into("<H", patched, local + 8, UNSUPPORTED_METHOD)
        struct.pack_into("<H", patched, central + 10, UNSUPPORTED_METHOD)
    elif how == "version":
        struct.pack_into("<H", patched, central + 6, 99)
    else:
        name_length, extra_length = struct.unpack_from("<HH", patched, local + 26)
        start = local + 30 + name_length + extra_length
        if info.compress_type == zipfile.ZIP_STORED:
            patched[start + info.compress_size // 2] ^= 0xFF
        else:
            patched[start] = 0x07
    return bytes(patched)


def _central_header(data: bytearray, start: int, name: str) -> int:
    """The offset of ``name``'s central directory header, searched from ``start``."""
    offset = start
    while data[offset : offset + 4] == b"PK\x01\x02":
        name_length, extra_length, comment_length = struct.unpack_from("<HHH", data, offset + 28)
        if data[offset + 46 : offset + 46 + name_length].decode() == name:
            return offset
        offset += 46 + name_length + extra_length + comment_length
    raise KeyError(name)


def grounded_package() -> str:
    """The CS201 example package, canonical JSON, whose second node asks about the report."""
    document = example_document()
    document["nodes"][1]["grounding"] = GROUNDING
    return json.dumps(document)
