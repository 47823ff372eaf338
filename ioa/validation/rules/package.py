"""Step 2: package rules (PKG-001..014)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from datetime import datetime
from typing import Final

import langcodes

from ioa.languages import SUPPORTED_LANGUAGES, primary_language
from ioa.runtime.answer_end import turn_timing
from ioa.schema.enums import StructureLevel
from ioa.schema.fields import MAX_NODES, PACKAGE_ID_RE
from ioa.schema.paths import JsonPath
from ioa.validation.document import (
    NodeView,
    PackageDocument,
    as_int,
    as_list,
    as_mapping,
    as_str,
    as_text,
    describe,
)
from ioa.validation.findings import Issue, Phase, Severity
from ioa.validation.registry import PUBLISH_AND_RUNTIME, RuleInput, rule
from ioa.versioning import CURRENT, IR_VERSION_PATTERN


def listing(values: Iterable[str], limit: int = 5) -> str:
    """``'a', 'b', 'c'`` (at most ``limit`` values, then ``and N more``)."""
    items = list(values)
    shown = ", ".join(f"'{value}'" for value in items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def _first_question_id(doc: PackageDocument) -> str | None:
    for node in doc.nodes:
        if node.node_id and not node.is_end:
            return node.node_id
    return None


@rule(
    "PKG-001",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary="Every package MUST have exactly one initialNodeId.",
)
def has_one_initial_node(inp: RuleInput) -> Iterator[Issue]:
    """initialNodeId is present and is a single, non-blank string."""
    doc = inp.doc
    if not doc.is_object:
        return
    suggestion = _first_question_id(doc)
    hint = f"'{suggestion}'" if suggestion else "the id of the first node"
    if "initialNodeId" not in doc.root:
        yield Issue(
            ("initialNodeId",),
            f'the package has no initialNodeId; add "initialNodeId": {hint}',
        )
        return
    value = doc.root["initialNodeId"]
    if isinstance(value, list):
        yield Issue(
            ("initialNodeId",),
            f"initialNodeId must be exactly one node id (a string), got an array of "
            f"{len(value)}; keep only the id of the node the exam starts with",
        )
    elif not isinstance(value, str):
        yield Issue(
            ("initialNodeId",),
            f"initialNodeId must be a node id (a string), got {describe(value)}; set it to {hint}",
        )
    elif not value.strip():
        yield Issue(("initialNodeId",), f"initialNodeId is empty; set it to {hint}")


@rule(
    "PKG-002",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary="initialNodeId MUST refer to an existing node in the package's nodes array.",
    stages=PUBLISH_AND_RUNTIME,
)
def initial_node_exists(inp: RuleInput) -> Iterator[Issue]:
    """initialNodeId names a node (a pool id is not enough)."""
    doc = inp.doc
    initial = as_text(doc.root.get("initialNodeId"))
    if initial is None or initial in doc.node_by_id:
        return
    known = [node.node_id for node in doc.nodes if node.node_id]
    if initial in doc.pool_by_id:
        yield Issue(
            ("initialNodeId",),
            f"initialNodeId '{initial}' names a question pool, but the exam must start at a "
            "node; start at a node that leads to the pool (e.g. a warmup)",
        )
        return
    existing = f"existing node ids: {listing(known)}" if known else "the package has no nodes"
    yield Issue(
        ("initialNodeId",),
        f"initialNodeId '{initial}' does not match any nodeId ({existing}); set it to the id "
        "of the node the exam starts with",
    )


@rule(
    "PKG-003",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary="initialNodeId MUST NOT refer to an end node.",
)
def initial_node_not_end(inp: RuleInput) -> Iterator[Issue]:
    """The exam cannot start at an end node."""
    doc = inp.doc
    initial = as_text(doc.root.get("initialNodeId"))
    node = doc.node_by_id.get(initial) if initial is not None else None
    if node is not None and node.is_end:
        yield Issue(
            ("initialNodeId",),
            f"initialNodeId '{initial}' is an end node, so the exam would end before it starts; "
            "start at a warmup or question node",
        )


@rule(
    "PKG-004",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary="Published packages MUST include irVersion in the format ioa-orm/MAJOR.MINOR.",
    stages=PUBLISH_AND_RUNTIME,
)
def ir_version_well_formed(inp: RuleInput) -> Iterator[Issue]:
    """irVersion is present and well-formed (support is checked by CMP-002/009)."""
    doc = inp.doc
    if not doc.is_object:
        return
    if "irVersion" not in doc.root:
        yield Issue(("irVersion",), f'the package has no irVersion; add "irVersion": "{CURRENT}"')
        return
    value = doc.root["irVersion"]
    if not isinstance(value, str) or IR_VERSION_PATTERN.fullmatch(value) is None:
        yield Issue(
            ("irVersion",),
            f"irVersion must look like '{CURRENT}' (ioa-orm/MAJOR.MINOR), got {describe(value)}; "
            f'write "{CURRENT}"',
        )


@rule(
    "PKG-005",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary="Package nodes array MUST contain at least one node.",
)
def has_nodes(inp: RuleInput) -> Iterator[Issue]:
    """nodes is a non-empty array."""
    doc = inp.doc
    if not doc.is_object:
        return
    if "nodes" not in doc.root:
        yield Issue(
            ("nodes",), 'the package has no nodes array; add "nodes": [...] with at least one node'
        )
    elif not doc.nodes_is_list:
        yield Issue(
            ("nodes",),
            f"nodes must be an array of node objects, got {describe(doc.root['nodes'])}",
        )
    elif not doc.nodes:
        yield Issue(("nodes",), "nodes is empty; add at least one node (and an end node)")


@rule(
    "PKG-006",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary="All nodeId values within a package MUST be unique.",
)
def node_ids_unique(inp: RuleInput) -> Iterator[Issue]:
    """Each nodeId appears once; later duplicates are reported."""
    first_index: dict[str, int] = {}
    for node in inp.doc.nodes:
        node_id = node.node_id
        if node_id is None:
            continue
        if node_id in first_index:
            yield node.issue(
                f"nodeId '{node_id}' is already used by nodes[{first_index[node_id]}]; give "
                "every node a unique id (and update the transitions that point to it)",
                "nodeId",
            )
        else:
            first_index[node_id] = node.index


REQUIRED_METADATA: Final = ("packageId", "title", "createdAt")


@rule(
    "PKG-007",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary="Package MUST include a metadata object with at least packageId, title, and createdAt.",
)
def metadata_present(inp: RuleInput) -> Iterator[Issue]:
    """metadata is an object with non-blank packageId and title and a valid createdAt."""
    doc = inp.doc
    if not doc.is_object:
        return
    metadata = as_mapping(doc.root.get("metadata"))
    if metadata is None:
        got = (
            "it is missing"
            if "metadata" not in doc.root
            else f"got {describe(doc.root['metadata'])}"
        )
        yield Issue(
            ("metadata",),
            f"the package needs a metadata object with packageId, title and createdAt ({got})",
        )
        return
    for key in REQUIRED_METADATA:
        value = metadata.get(key)
        if key not in metadata:
            yield Issue(("metadata", key), f"metadata.{key} is missing; add it")
        elif as_text(value) is None:
            yield Issue(
                ("metadata", key),
                f"metadata.{key} must be a non-empty string, got {describe(value)}",
            )
    created = as_text(metadata.get("createdAt"))
    if created is not None and not _is_timestamp(created):
        yield Issue(
            ("metadata", "createdAt"),
            f"metadata.createdAt must be an ISO 8601 date-time with time zone, got {created!r}; "
            "write e.g. 2026-11-01T09:00:00Z",
        )


def _is_timestamp(text: str) -> bool:
    try:
        return datetime.fromisoformat(text).tzinfo is not None
    except ValueError:
        return False


@rule(
    "PKG-008",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary="metadata.packageId MUST be a valid UUID or ULID.",
)
def package_id_is_uuid_or_ulid(inp: RuleInput) -> Iterator[Issue]:
    """packageId (when a non-blank string) is a UUID or a ULID."""
    package_id = as_text(inp.doc.metadata.get("packageId"))
    if package_id is not None and PACKAGE_ID_RE.fullmatch(package_id) is None:
        yield Issue(
            ("metadata", "packageId"),
            f"metadata.packageId must be a UUID (e.g. 0192f3a0-7c1e-7b3a-9d2e-3f4a5b6c7d8e) or "
            f"a ULID (26 characters), got {package_id!r}; generate one and keep it for every "
            "version of this package",
        )


@rule(
    "PKG-009",
    phase=Phase.PACKAGE,
    severity=Severity.WARNING,
    summary="Package SHOULD include metadata.author and metadata.version.",
)
def author_and_version(inp: RuleInput) -> Iterator[Issue]:
    """author and version are present (for attribution and audit)."""
    doc = inp.doc
    if as_mapping(doc.root.get("metadata")) is None:
        return
    for key, example in (("author", "the teaching team"), ("version", "1.0.0")):
        if as_text(doc.metadata.get(key)) is None:
            yield Issue(
                ("metadata", key),
                f'metadata.{key} is missing; add it (e.g. "{example}") so published versions '
                "can be attributed and told apart",
            )


@rule(
    "PKG-010",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary=f"Package MUST NOT contain more than {MAX_NODES} nodes (runtime performance limit).",
)
def node_limit(inp: RuleInput) -> Iterator[Issue]:
    """At most 200 nodes."""
    count = len(inp.doc.nodes)
    if count > MAX_NODES:
        yield Issue(
            ("nodes",),
            f"the package has {count} nodes, more than the limit of {MAX_NODES}; split it into "
            "several packages or use question pools",
        )


# --- PKG-011: external references -------------------------------------------------------

_URL_RE: Final = re.compile(
    r"(?i)\b(?:[a-z][a-z0-9+.-]*://|www\.)[^\s<>\"'`]+|\bmailto:[^\s<>\"'`]+"
)
_EDGE_PUNCTUATION: Final = "\"'`()[]{}<>,;:!?"
_ABSOLUTE_POSIX_RE: Final = re.compile(r"/[\w.-]+(?:/[\w.-]+)+/?|/[\w-]+\.[A-Za-z][A-Za-z0-9]{0,4}")
_RELATIVE_FILE_RE: Final = re.compile(r"[\w.-]+(?:[/\\][\w.-]+)+\.[A-Za-z][A-Za-z0-9]{0,4}")
_WINDOWS_RE: Final = re.compile(r"[A-Za-z]:[\\/]\S*|\\\\\S+")


def external_references(text: str) -> list[str]:
    """URLs and file paths mentioned in ``text`` (see ``docs/spec/validation.md``, PKG-011).

    * URLs: anything with a scheme (``https://``, ``file://``...), ``www.`` hosts, ``mailto:``;
    * absolute paths: ``/a/b``, ``/file.ext``, ``~/...``, ``./...``, ``../...``, ``C:\\...``,
      ``\\\\server\\share``;
    * relative paths: a token with a path separator ending in a file extension (``img/x.png``).

    Prose like ``TCP/IP``, ``and/or`` or ``O(n/2)`` is not a path.
    """
    if not may_reference(text):
        return []
    found: list[str] = []
    for match in _URL_RE.finditer(text):
        found.append(match.group(0).rstrip(".,;:!?)]}'\""))
    remainder = _URL_RE.sub(" ", text)
    for raw_token in remainder.split():
        token = raw_token.strip(_EDGE_PUNCTUATION).rstrip(".")
        if len(token) < 2:
            continue
        if (token.startswith(("~/", "./", "../")) and len(token) > 3) or (
            _WINDOWS_RE.fullmatch(token)
            or _ABSOLUTE_POSIX_RE.fullmatch(token)
            or _RELATIVE_FILE_RE.fullmatch(token)
        ):
            found.append(token)
    return found


def _declared_dependencies(doc: PackageDocument) -> list[str]:
    declared = as_list(doc.metadata.get("externalDependencies")) or []
    uris: list[str] = []
    for entry in declared:
        mapping = as_mapping(entry)
        uri = as_text(mapping.get("uri")) if mapping is not None else None
        if uri is not None:
            uris.append(uri.strip())
    return uris


def _is_declared(reference: str, declared: list[str]) -> bool:
    return any(
        reference == uri or (uri.endswith("/") and reference.startswith(uri)) for uri in declared
    )


def may_reference(text: str) -> bool:
    """Cheap pre-filter: False when ``text`` cannot hold a URL or a path (no ``/``, no ``\\``,
    no ``www.``, no ``mailto:``). Plain substring tests: much faster than a regex."""
    if "/" in text or "\\" in text:
        return True
    lowered = text.lower()
    return "www." in lowered or "mailto:" in lowered


def _may_hold_references(doc: PackageDocument) -> bool:
    """False when no string of the document (irVersion and the declarations aside) can hold a
    reference: one C-speed serialisation and one search instead of a walk over every value."""
    root = dict(doc.root)
    root.pop("irVersion", None)
    metadata = as_mapping(root.get("metadata"))
    if metadata is not None:
        root["metadata"] = {k: v for k, v in metadata.items() if k != "externalDependencies"}
    try:
        # No cycle check (faster): a cycle raises RecursionError, and the walk handles it.
        text = json.dumps(root, ensure_ascii=False, check_circular=False)
    except (TypeError, ValueError, RecursionError):
        return True  # not plain JSON: walk it
    if "/" in text or "\\\\" in text:  # JSON writes a backslash as two backslashes
        return True
    lowered = text.lower()
    return "www." in lowered or "mailto:" in lowered


def _candidate_strings(doc: PackageDocument) -> Iterator[tuple[JsonPath, str]]:
    """Strings that may hold a reference, with their paths (iterative, cycle-safe).

    ``irVersion`` and ``metadata.externalDependencies`` (the declarations) are skipped. Paths
    are only built for containers and for strings that pass the pre-filter.
    """
    skip: JsonPath = ("metadata", "externalDependencies")
    stack: list[tuple[JsonPath, object]] = [((), doc.raw)]
    seen: set[int] = set()
    search = may_reference
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            if search(value):
                yield path, value
            continue
        if id(value) in seen or path == skip:
            continue
        seen.add(id(value))
        items: Iterable[tuple[str | int, object]]
        if isinstance(value, dict):
            items = (
                (key if isinstance(key, str | int) else str(key), item)
                for key, item in value.items()
            )
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        children: list[tuple[JsonPath, object]] = []
        for key, item in items:
            if isinstance(item, str):
                if search(item) and (path or key != "irVersion"):
                    children.append(((*path, key), item))
            elif isinstance(item, dict | list):
                children.append(((*path, key), item))
        stack.extend(reversed(children))


@rule(
    "PKG-011",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary=(
        "Package MUST NOT reference external resources (URLs, file paths) unless declared in "
        "metadata.externalDependencies."
    ),
)
def no_undeclared_external_references(inp: RuleInput) -> Iterator[Issue]:
    """Every URL or file path in a string field is declared as an external dependency."""
    doc = inp.doc
    if doc.is_object and not _may_hold_references(doc):
        return
    declared = _declared_dependencies(doc)
    for path, text in _candidate_strings(doc):
        for reference in external_references(text):
            if _is_declared(reference, declared):
                continue
            node_id: str | None = None
            if len(path) >= 2 and path[0] == "nodes" and isinstance(path[1], int):
                node_id = doc.nodes[path[1]].node_id or None
            yield Issue(
                path,
                f"mentions the external resource '{reference}', which is not part of the package; "
                "remove it, or declare it in metadata.externalDependencies "
                f'({{"uri": "{reference}", "purpose": "..."}})',
                node_id,
            )


# --- PKG-012: structure level -----------------------------------------------------------


def follow_up_allowance(node: NodeView) -> int | None:
    """``followUpPolicy.maxFollowUps`` of a node; 0 without a policy; None if malformed."""
    policy = node.get("followUpPolicy")
    if policy is None:
        return 0
    mapping = as_mapping(policy)
    if mapping is None:
        return None
    return as_int(mapping.get("maxFollowUps"))


def structure_inconsistency(level: str, allowances: Mapping[str, int]) -> str | None:
    """Why the follow-up allowances of the question nodes contradict ``level`` (or None).

    * closed: every question node allows at most 1 follow-up;
    * semi-structured: at least one question node allows follow-ups;
    * open: more than half of the question nodes allow follow-ups.
    """
    if not allowances:
        return None
    probing = [node_id for node_id, count in allowances.items() if count > 0]
    if level == StructureLevel.CLOSED.value:
        too_many = [f"{node_id} ({count})" for node_id, count in allowances.items() if count > 1]
        if too_many:
            return (
                "a closed structure allows at most 1 follow-up per question node, but "
                + ", ".join(too_many[:5])
                + (" and more" if len(too_many) > 5 else "")
                + " allow more"
            )
        return None
    if level == StructureLevel.SEMI_STRUCTURED.value:
        if not probing:
            return (
                "a semi-structured exam probes with follow-ups, but no question node allows any "
                "(all maxFollowUps are 0)"
            )
        return None
    if level == StructureLevel.OPEN.value and len(probing) * 2 <= len(allowances):
        return (
            f"an open structure needs follow-ups on most question nodes, but only {len(probing)} "
            f"of {len(allowances)} allow any"
        )
    return None


@rule(
    "PKG-012",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary=(
        "metadata.structureLevel MUST be closed, semi-structured or open, consistent with the "
        "follow-up policies, or justified in metadata.structureJustification."
    ),
)
def structure_level(inp: RuleInput) -> Iterator[Issue]:
    """structureLevel is present, valid, and matches the follow-up allowances (or justified)."""
    doc = inp.doc
    if as_mapping(doc.root.get("metadata")) is None:
        return
    allowed = ", ".join(level.value for level in StructureLevel)
    if "structureLevel" not in doc.metadata:
        yield Issue(
            ("metadata", "structureLevel"),
            f"metadata.structureLevel is missing; add one of {allowed} (Joughin's closed-open "
            "continuum)",
        )
        return
    level = as_str(doc.metadata.get("structureLevel"))
    if level not in {member.value for member in StructureLevel}:
        yield Issue(
            ("metadata", "structureLevel"),
            f"metadata.structureLevel must be one of {allowed}, "
            f"got {describe(doc.metadata.get('structureLevel'))}",
        )
        return
    allowances: dict[str, int] = {}
    for node in doc.question_nodes:
        count = follow_up_allowance(node)
        if count is not None and count >= 0:
            allowances[node.node_id or f"nodes[{node.index}]"] = count
    reason = structure_inconsistency(level, allowances)
    if reason is not None and doc.justification("structureJustification") is None:
        yield Issue(
            ("metadata", "structureLevel"),
            f"structureLevel '{level}' is inconsistent with the follow-up policies: {reason}; "
            "change the level or the maxFollowUps values, or explain the choice in "
            "metadata.structureJustification",
        )


# --- PKG-013: the exam's language -----------------------------------------------------------


def language_problem(tag: str) -> str | None:
    """Why ``tag`` cannot be an exam's language (or None): not a well-formed, registered BCP 47
    tag (checked against the IANA subtag registry by :mod:`langcodes`), or a language the runtime
    has no tables for (:data:`ioa.languages.SUPPORTED_LANGUAGES`)."""
    supported = ", ".join(SUPPORTED_LANGUAGES)
    if "_" in tag or not langcodes.tag_is_valid(tag):
        return (
            f"metadata.language '{tag}' is not a valid BCP 47 language tag (such as 'en', 'de' "
            f"or 'es-MX'); this platform conducts exams in {supported}"
        )
    language = primary_language(tag)
    if language not in SUPPORTED_LANGUAGES:
        name = langcodes.Language.get(tag).language or language
        return (
            f"metadata.language '{tag}' ({name}) is not supported: the examiner's procedural "
            f"lines, the candidate's pages and the voice exist only in {supported}; choose one "
            "of them (the exam would otherwise not be conducted in the candidate's language)"
        )
    return None


@rule(
    "PKG-013",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary=(
        "metadata.language, when present, MUST be a valid BCP 47 tag whose language the "
        "platform supports (en, de, es): it decides the candidate's pages, the runtime's lines, "
        "the command vocabulary and the voice."
    ),
    stages=PUBLISH_AND_RUNTIME,
)
def exam_language(inp: RuleInput) -> Iterator[Issue]:
    """metadata.language is a registered BCP 47 tag of a supported language (absent = en)."""
    doc = inp.doc
    if "language" not in doc.metadata:
        return
    value = doc.metadata.get("language")
    tag = as_str(value)
    if tag is None:
        yield Issue(
            ("metadata", "language"),
            f"metadata.language must be a BCP 47 language tag string, got {describe(value)}",
        )
        return
    problem = language_problem(tag)
    if problem is not None:
        yield Issue(("metadata", "language"), problem)


@rule(
    "PKG-014",
    phase=Phase.PACKAGE,
    severity=Severity.ERROR,
    summary=(
        "metadata.extensions.voice, when present, MUST be an object whose pause settings "
        "(finishedPauseSec, hesitantPauseSec, thinkingPauseSec) are numbers of seconds between "
        "0 and 30 that grow in that order, and replyPauseSec one between 0 and 30: they decide "
        "when a spoken answer is over."
    ),
    stages=PUBLISH_AND_RUNTIME,
)
def voice_pauses(inp: RuleInput) -> Iterator[Issue]:
    """The end-of-turn pauses (``ioa.runtime.answer_end.turn_timing``) are usable."""
    extensions = as_mapping(inp.doc.metadata.get("extensions"))
    if extensions is None or "voice" not in extensions:
        return
    if as_mapping(extensions.get("voice")) is None:
        yield Issue(
            ("metadata", "extensions", "voice"),
            "metadata.extensions.voice must be an object such as "
            f'{{"thinkingPauseSec": 8}}, got {describe(extensions.get("voice"))}',
        )
        return
    try:
        turn_timing(extensions)
    except ValueError as error:
        yield Issue(("metadata", "extensions", "voice"), str(error))
