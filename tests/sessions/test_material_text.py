"""Reading uploaded materials (sessions.material_text, issue #35): the type comes from the
content, every refusal names what is wrong, and a code archive is read without trusting it
(bombs, path traversal, links, binary files, entries that are encrypted, damaged or compressed
in a way that cannot be read); the text read can always be stored (no NUL, no lone
surrogate)."""

from __future__ import annotations

import stat
import zipfile
from typing import Literal

import pytest

from sessions.material_text import (
    MAX_UPLOAD_BYTES,
    MaterialRefused,
    extract,
    safe_entry_name,
)
from tests.sessions.material_files import (
    REPORT_LINES,
    docx_bytes,
    encrypted_pdf_bytes,
    pdf_bytes,
    surrogate_pdf_bytes,
    unreadable_entry,
    zip_bytes,
)


def refusal(data: bytes) -> str:
    with pytest.raises(MaterialRefused) as caught:
        extract(data)
    return caught.value.message


def test_a_pdf_is_read_page_by_page() -> None:
    extracted = extract(pdf_bytes())
    assert extracted.file_type == "pdf"
    assert "instead of Bellman-Ford because all edge weights are positive." in extracted.text
    assert "does not handle roads" in extracted.text


def test_a_docx_is_read_by_its_content_whatever_its_name() -> None:
    extracted = extract(docx_bytes())
    assert extracted.file_type == "docx"
    assert extracted.text.split("\n\n") == list(REPORT_LINES)


def test_markdown_is_text_and_a_byte_order_mark_is_dropped() -> None:
    extracted = extract("\ufeff# Report\n\nWe chose a heap.".encode())
    assert extracted == extract(b"# Report\n\nWe chose a heap.")
    assert extracted.file_type == "text"


def test_refusals_name_what_is_wrong() -> None:
    assert "encrypted" in refusal(encrypted_pdf_bytes())
    assert "too large" in refusal(b"x" * (MAX_UPLOAD_BYTES + 1))
    assert "empty" in refusal(b"")
    assert "cannot be read. Accepted: .pdf, .docx, .md, .txt, .zip" in refusal(b"\x7fELF\x00\x01")
    assert "not UTF-8" in refusal("Größe".encode("latin-1"))
    assert "damaged" in refusal(b"%PDF-1.4 garbage")
    assert "no text" in refusal(pdf_bytes(()))
    assert "no text" in refusal(b"   \n  ")


def test_a_code_archive_gives_its_source_files_under_their_names() -> None:
    data = zip_bytes(
        {
            "src/main.py": b"def route():\n    return 1\n",
            "README.md": b"We chose Python.",
            "build/app.bin": b"\x00\x01\x02",
            "notes.py": b"binary\x00inside",
        }
    )
    extracted = extract(data)
    assert extracted.file_type == "archive"
    assert (
        extracted.text
        == "File: README.md\nWe chose Python.\n\nFile: src/main.py\ndef route():\n    return 1"
    )


def test_a_zip_bomb_is_refused_before_it_is_unpacked() -> None:
    assert "too large when unpacked" in refusal(zip_bytes({"a.txt": b"0" * (60 << 20)}))
    assert "too large when unpacked" in refusal(zip_bytes({"a.py": b"0" * (2 << 20)}))


def test_archive_entries_outside_the_archive_or_links_are_skipped() -> None:
    def info(name: str, mode: int = stat.S_IFREG | 0o644) -> zipfile.ZipInfo:
        entry = zipfile.ZipInfo(name)
        entry.external_attr = mode << 16
        return entry

    assert safe_entry_name(info("src/a.py")) == "src/a.py"
    for name in ("../evil.py", "/etc/passwd.py", "a/../../b.py", "C:/x.py", "a\\..\\b.py"):
        assert safe_entry_name(info(name)) is None, name
    assert safe_entry_name(info("link.py", stat.S_IFLNK | 0o777)) is None
    data = zip_bytes({"../../escape.py": b"print('out')", "ok.py": b"print('in')"})
    assert extract(data).text == "File: ok.py\nprint('in')"


CODE = {
    "README.md": b"We chose Python.\n" * 40,
    "src/main.py": b"def route():\n    return 1\n" * 40,
}


@pytest.mark.parametrize(
    ("how", "stored", "reason"),
    [
        (
            "encrypted",
            False,
            "it is encrypted (password-protected). Make the ZIP without a password.",
        ),
        ("damaged", True, "it is damaged. Make the ZIP again."),
        ("damaged", False, "it is damaged. Make the ZIP again."),
        (
            "method",
            False,
            "it is compressed with a method that is not supported. Make the ZIP again with"
            " standard (Deflate) compression.",
        ),
    ],
)
def test_a_code_archive_with_an_unreadable_source_file_is_refused_naming_it(
    how: Literal["encrypted", "damaged", "method"], stored: bool, reason: str
) -> None:
    """An entry zipfile cannot read (RuntimeError, BadZipFile for a bad CRC-32, zlib.error,
    NotImplementedError) refuses the archive with the entry's name and why, never an error."""
    data = zip_bytes(CODE, stored=("src/main.py",) if stored else ())
    message = refusal(unreadable_entry(data, "src/main.py", how))
    assert message == f"The file src/main.py could not be read from the ZIP: {reason}"


def test_a_zip_that_needs_a_newer_zip_version_is_damaged_not_an_error() -> None:
    data = unreadable_entry(zip_bytes(CODE), "README.md", "version")
    assert refusal(data) == "The ZIP file is damaged and cannot be read."
    assert refusal(unreadable_entry(docx_bytes(), "word/document.xml", "version")) == (
        "The ZIP file is damaged and cannot be read."
    )


def test_a_docx_with_a_damaged_part_is_refused_as_damaged() -> None:
    assert refusal(unreadable_entry(docx_bytes(), "word/document.xml", "damaged")) == (
        "The Word file is damaged and cannot be read."
    )


def test_text_a_database_cannot_hold_is_cleaned() -> None:
    """pypdf can read NUL characters and lone surrogates out of a PDF; PostgreSQL's text holds
    neither, so NULs are dropped and a lone surrogate becomes U+FFFD."""
    nul = extract(pdf_bytes(("We chose A\x00B instead of C.",)))
    assert nul.text == "We chose AB instead of C."
    assert extract(surrogate_pdf_bytes("BABB")).text == "B\ufffdBB"
