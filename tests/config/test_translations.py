"""Every candidate-facing string is translated for each shipped language (docs/i18n.md).

* the committed ``.mo`` files are compiled from the ``.po`` files (no GNU gettext needed);
* each catalogue entry used by a candidate-facing source is translated, not fuzzy, and keeps
  the English placeholders;
* every de/es catalogue is complete (issue #34): ``msgfmt --check --statistics`` reports no
  untranslated or fuzzy message and no error, and no translation drops or changes a
  placeholder (``%(name)s``, ``%s``, ``{name}``, ``%%``) or an HTML tag of its msgid;
* candidate templates hold no literal text outside ``{% translate %}``/``{% blocktranslate %}``,
  and every string they and the exam room's scripts mark is in the catalogues (a string added
  after the last ``make messages`` fails here, not silently in English on a German page).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.template.base import Lexer, TokenType

from config.messages import LOCALE_DIR, catalogues, compiled, read_mo

ROOT = Path(settings.BASE_DIR)
SHIPPED = [code for code, _ in settings.LANGUAGES if code != "en"]

CANDIDATE_TEMPLATES = (
    "templates/base.html",
    "templates/403.html",
    "templates/404.html",
    "templates/accounts/invitation_confirm.html",
    "templates/accounts/invitation_refused.html",
    "templates/sessions/_journey.html",
    "templates/sessions/candidate_home.html",
    "templates/sessions/exam_identity.html",
    "templates/sessions/exam_briefing.html",
    "templates/sessions/exam_material.html",
    "templates/sessions/exam_setup.html",
    "templates/sessions/exam_room.html",
    "templates/sessions/exam_done.html",
    "templates/sessions/exam_window.html",
    "templates/marking/result.html",
    "templates/marking/practice_result.html",
    "templates/sessions/practice_refused.html",
)
CANDIDATE_SCRIPTS = ("static/js/exam-room.js", "static/js/exam-room-setup.js")
CANDIDATE_PYTHON = (
    "sessions/views.py",
    "sessions/exam_room.py",
    "accounts/views.py",
    "accounts/services.py",
    "marking/result_views.py",
    "sessions/practice.py",
    "sessions/material_text.py",
    "sessions/materials.py",
)
CANDIDATE_SOURCES = frozenset(CANDIDATE_TEMPLATES + CANDIDATE_SCRIPTS + CANDIDATE_PYTHON)
"""What a candidate sees: their pages, the exam room's scripts and the Python strings those
pages show (step labels, part kinds, form errors, invitation refusals)."""

PLACEHOLDER = re.compile(r"%\(\w+\)[sd]|%%")


def candidate_entries(language: str, domain: str) -> list[polib.POEntry]:
    po = polib.pofile(str(LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po"))
    return [e for e in po if any(path in CANDIDATE_SOURCES for path, _ in e.occurrences)]


def test_every_shipped_language_has_both_catalogues() -> None:
    assert SHIPPED == ["de", "es"]
    for language in SHIPPED:
        for domain in ("django", "djangojs"):
            assert (LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po").is_file()


@pytest.mark.parametrize("po_path", list(catalogues()), ids=lambda p: "/".join(p.parts[-3:]))
def test_committed_mo_is_compiled_from_its_po(po_path: Path) -> None:
    mo_path = po_path.with_suffix(".mo")
    assert mo_path.is_file(), f"{mo_path} is missing: run make messages"
    assert read_mo(mo_path) == compiled(po_path), f"{mo_path} is stale: run make messages"


@pytest.mark.parametrize("language", SHIPPED)
@pytest.mark.parametrize("domain", ["django", "djangojs"])
def test_every_candidate_string_is_translated(language: str, domain: str) -> None:
    entries = candidate_entries(language, domain)
    assert len(entries) > 50
    missing = [e.msgid for e in entries if not e.translated() or "fuzzy" in e.flags]
    assert missing == [], f"{language}/{domain}: untranslated candidate strings: {missing}"
    for entry in entries:
        forms = list(entry.msgstr_plural.values()) if entry.msgid_plural else [entry.msgstr]
        for form in forms:
            assert sorted(PLACEHOLDER.findall(form)) == sorted(PLACEHOLDER.findall(entry.msgid)), (
                f"{language}: placeholders differ in {entry.msgid!r}"
            )


# --- every de/es catalogue is complete, with its msgids' placeholders (issue #34) -----------------

FORMAT_MARKS = re.compile(r"%\(\w+\)[sdf]|%[sdf]|%%|\{\w*\}|</?[a-zA-Z][^>]*>")
"""What a translation must carry over unchanged: ``%(name)s``, ``%s``, ``%%``, ``{name}``, tags."""

SHIPPED_CATALOGUES = [p for p in catalogues() if p.parts[-3] in SHIPPED]


def catalogue_problems(po_path: Path) -> list[str]:
    """Untranslated or fuzzy entries of ``po_path``, and translations whose placeholders or
    HTML tags differ from their msgid's (each plural form against msgid or msgid_plural)."""
    problems = []
    for entry in polib.pofile(str(po_path)):
        if entry.obsolete:
            continue
        if "fuzzy" in entry.flags:
            problems.append(f"fuzzy: {entry.msgid!r}")
            continue
        if not entry.translated():
            problems.append(f"untranslated: {entry.msgid!r}")
            continue
        if entry.msgid_plural:
            forms = [
                (entry.msgid if k == 0 else entry.msgid_plural, form)
                for k, form in sorted(entry.msgstr_plural.items())
            ]
        else:
            forms = [(entry.msgid, entry.msgstr)]
        for source, form in forms:
            if sorted(FORMAT_MARKS.findall(form)) != sorted(FORMAT_MARKS.findall(source)):
                problems.append(f"placeholders differ: {source!r} -> {form!r}")
    return problems


def msgfmt_statistics(po_path: Path) -> str:
    """``msgfmt --check --statistics``'s summary for ``po_path``; fails on any msgfmt error."""
    done = subprocess.run(
        ["msgfmt", "--check", "--statistics", "-o", "/dev/null", str(po_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, f"msgfmt --check failed on {po_path}:\n{done.stderr}"
    return done.stderr.strip().splitlines()[-1]


def test_shipped_catalogues_are_found() -> None:
    assert [p.relative_to(LOCALE_DIR).as_posix() for p in SHIPPED_CATALOGUES] == [
        "de/LC_MESSAGES/django.po",
        "de/LC_MESSAGES/djangojs.po",
        "es/LC_MESSAGES/django.po",
        "es/LC_MESSAGES/djangojs.po",
    ]


@pytest.mark.parametrize("po_path", SHIPPED_CATALOGUES, ids=lambda p: "/".join(p.parts[-3:]))
def test_every_message_is_translated_with_its_placeholders(po_path: Path) -> None:
    problems = catalogue_problems(po_path)
    assert problems == [], f"{po_path}: {len(problems)} problems: {problems[:20]}"


@pytest.mark.skipif(shutil.which("msgfmt") is None, reason="GNU gettext's msgfmt not installed")
@pytest.mark.parametrize("po_path", SHIPPED_CATALOGUES, ids=lambda p: "/".join(p.parts[-3:]))
def test_msgfmt_reports_no_untranslated_or_fuzzy_message(po_path: Path) -> None:
    summary = msgfmt_statistics(po_path)
    assert re.fullmatch(r"\d+ translated messages?\.", summary), f"{po_path}: {summary}"


def test_the_checks_catch_a_fuzzy_an_untranslated_and_a_changed_placeholder(
    tmp_path: Path,
) -> None:
    po = polib.POFile()
    po.metadata = {"Content-Type": "text/plain; charset=UTF-8", "Language": "de"}
    po.append(polib.POEntry(msgid="Hello %(name)s", msgstr="Hallo %(nom)s"))
    po.append(polib.POEntry(msgid="<strong>%s</strong> left", msgstr="%s übrig"))
    po.append(polib.POEntry(msgid="Draft", msgstr="Entwurf", flags=["fuzzy"]))
    po.append(polib.POEntry(msgid="Save"))
    po.append(polib.POEntry(msgid="Open {title}", msgstr="{title} öffnen"))
    path = tmp_path / "django.po"
    po.save(str(path))
    problems = catalogue_problems(path)
    assert [p.split(":")[0] for p in problems] == [
        "placeholders differ",
        "placeholders differ",
        "fuzzy",
        "untranslated",
    ]
    if shutil.which("msgfmt"):
        assert msgfmt_statistics(path) == (
            "3 translated messages, 1 fuzzy translation, 1 untranslated message."
        )


# --- the sources: nothing literal, nothing missing from the catalogues ----------------------------

TAG = re.compile(r"<[^>]*>", re.S)
COMMENT = re.compile(r"<!--.*?-->", re.S)
LABEL_ATTRIBUTE = re.compile(r'\b(?:aria-label|title|placeholder|alt)="([^"]*)"')
LETTERS = re.compile(r"[A-Za-z]{2,}")
TRANSLATE_LITERAL = re.compile(r"""^(?:translate|trans)\s+(?:"((?:[^"\\]|\\.)*)"|'([^']*)')""")


def literal_text(template: str) -> list[str]:
    """Text outside translate tags in ``template`` (not markup, not comments, not variables)."""
    parts: list[str] = []
    inside_block = False
    for token in Lexer(template).tokenize():
        if token.token_type is TokenType.BLOCK:
            name = token.contents.split()[0]
            inside_block = name in {"blocktranslate", "blocktrans"} or (
                inside_block and name not in {"endblocktranslate", "endblocktrans"}
            )
        if token.token_type is TokenType.TEXT and not inside_block:
            parts.append(token.contents)
        else:
            parts.append("\x00")
    text = re.sub(r"<(script|style)\b.*?</\1>", " ", COMMENT.sub(" ", "".join(parts)), flags=re.S)
    found = [v for v in LABEL_ATTRIBUTE.findall(text) if LETTERS.search(v.replace("\x00", ""))]
    found.extend(t.strip() for t in TAG.split(text) if LETTERS.search(t))
    return found


@pytest.mark.parametrize("path", CANDIDATE_TEMPLATES)
def test_candidate_templates_have_no_literal_text(path: str) -> None:
    leftovers = [
        t for t in literal_text((ROOT / path).read_text()) if re.sub(r"[\x00·\s]|Viva", "", t)
    ]
    assert leftovers == [], f"{path}: wrap in {{% translate %}}: {leftovers}"


def marked_strings(path: str) -> set[str]:
    source = (ROOT / path).read_text()
    if path.endswith(".js"):
        return set(re.findall(r'\bgettext\("((?:[^"\\]|\\.)*)"\)', source))
    found = set()
    for token in Lexer(source).tokenize():
        if token.token_type is TokenType.BLOCK and (m := TRANSLATE_LITERAL.match(token.contents)):
            literal = m.group(1) if m.group(1) is not None else m.group(2)
            found.add(literal.replace("%", "%%"))  # as makemessages writes a template's %
    return found


@pytest.mark.parametrize("language", SHIPPED)
def test_marked_candidate_strings_are_in_the_catalogues(language: str) -> None:
    for domain, paths in (("django", CANDIDATE_TEMPLATES), ("djangojs", CANDIDATE_SCRIPTS)):
        po = polib.pofile(str(LOCALE_DIR / language / "LC_MESSAGES" / f"{domain}.po"))
        known = {e.msgid for e in po.translated_entries()}
        for path in paths:
            absent = sorted(s.replace('\\"', '"') for s in marked_strings(path))
            absent = [s for s in absent if s not in known]
            assert absent == [], f"{path}: not in {language}/{domain}.po (make messages): {absent}"
