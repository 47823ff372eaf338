"""Small candidate materials built in the test: a PDF with text (hand-written PDF syntax, read
by pypdf), an encrypted PDF, a DOCX (python-docx) and zip archives; and a package whose second
node is grounded on the candidate's report (``grounded_package``)."""

from __future__ import annotations

import io
import json
import zipfile

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
    content = f"BT /F1 10 Tf 40 760 Td {shows} ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        b" /Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
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


def zip_bytes(entries: dict[str, bytes], *, compression: int = zipfile.ZIP_DEFLATED) -> bytes:
    """A zip holding ``entries`` (name -> bytes)."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", compression=compression) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
    return out.getvalue()


def grounded_package() -> str:
    """The CS201 example package, canonical JSON, whose second node asks about the report."""
    document = example_document()
    document["nodes"][1]["grounding"] = GROUNDING
    return json.dumps(document)
