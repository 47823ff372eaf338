"""The text an exam's language model is built from (:mod:`bot.voice.exam_language_model`).

Everything in the package that says what the exam is about: titles, learning outcomes, the
examiner's openings and prompt seeds, scenarios, rubric targets and their level descriptors,
follow-ups. It biases recognition only: none of it is shown or said to the candidate by this
path. Identifiers, enum values and URLs are left out (any string without a space).

Plus :data:`EXAM_PHRASES`: what candidates say to the exam itself in any exam (asking for a
repeat, for time, to finish, yes and no), so those stay recognisable.

Plus where candidates stop to think (:func:`spoken_fragments`): a VAD segment ends at a pause,
so a segment often ends on an open word ("... a priority queue of") or a filler ("um"). A
model of whole written sentences gives those endings almost no probability, and the recogniser
drops the last word, the very word that says the answer goes on (issue #30: the end-of-turn
policy reads it, ``ioa.runtime.answer_end``). Each sentence's prefixes that end on an open word,
and the fillers alone and after a sentence's opening, are counted too.

Per node (:func:`node_texts`): the node's own prose, the package's metadata prose (title,
learning outcomes) and :data:`EXAM_PHRASES`; the recogniser decodes an answer with the model of
the node the candidate is answering (:class:`bot.voice.exam_language_model.ExamModels`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Final

from ioa.runtime.answer_end import CUES
from ioa.schema import AssessmentPackage

EXAM_PHRASES: Final = (
    "Could you repeat the question please.",
    "Can you say that again.",
    "Sorry I did not catch that.",
    "Could you rephrase the question.",
    "I need a moment to think.",
    "Can I have a short break.",
    "I would like to skip this question.",
    "I want to finish the exam.",
    "Yes I am sure.",
    "No I do not want to finish.",
    "No I have nothing to add thank you.",
    "I am not sure.",
    "I do not know.",
    "Let me think about that.",
    "I think the answer is.",
    "Yes. No. Okay. Thank you.",
    "Um. Uh. Erm. Hmm. Let me think.",
    "Um, let me think about that.",
    "Uh, I think it is, um, the",
)
FRAGMENTS_PER_SENTENCE: Final = 6
"""At most this many open-word prefixes of one sentence (:func:`spoken_fragments`)."""
_SKIPPED_KEYS: Final = frozenset({"id", "type", "kind", "irVersion", "packageId", "language"})


def package_texts(document: Mapping[str, object]) -> list[str]:
    """The package's prose (module docstring) and its spoken fragments, then
    :data:`EXAM_PHRASES`."""
    prose = list(_prose(document))
    return [*prose, *spoken_fragments(prose), *EXAM_PHRASES]


def spoken_fragments(texts: list[str]) -> list[str]:
    """Where a candidate saying ``texts`` might stop to think (module docstring): each
    sentence's prefixes ending on an English open word (at most
    :data:`FRAGMENTS_PER_SENTENCE`, the longest first), and its first three words followed by
    "um", each as a sentence of its own."""
    open_words = CUES["en"].open_words
    found: list[str] = []
    for text in texts:
        for sentence in text.replace("\n", ".").split("."):
            tokens = sentence.split()
            ends = [i for i, token in enumerate(tokens[1:], 1) if _bare(token) in open_words]
            found += [" ".join(tokens[: i + 1]) + "." for i in ends[-FRAGMENTS_PER_SENTENCE:]]
            if len(tokens) > 3:
                found.append(" ".join(tokens[:3]) + " um.")
    return found


def _bare(token: str) -> str:
    return token.strip(",;:!?()\"'").lower()


def node_texts(document: Mapping[str, object]) -> dict[str, list[str]]:
    """Node id → the node's prose, the metadata's prose, then :data:`EXAM_PHRASES`; nodes with
    no prose of their own are left out (the package-wide text serves them)."""
    metadata = list(_prose(document.get("metadata", {})))
    nodes = document.get("nodes", [])
    found: dict[str, list[str]] = {}
    for node in nodes if isinstance(nodes, list) else []:
        own = list(_prose(node)) if isinstance(node, dict) else []
        if own and isinstance(node_id := node.get("nodeId"), str):
            found[node_id] = [*own, *spoken_fragments(own), *metadata, *EXAM_PHRASES]
    return found


def node_prose(document: Mapping[str, object]) -> dict[str, list[str]]:
    """Node id → the node's own prose (its question, descriptions), with nothing added; the
    metadata's prose under ``""``. What a recogniser that reads context rather than a language
    model is given (Whisper's prompt, ``bot.voice.whisper_stt``): fragments and exam phrases
    would be read as words said just before the answer."""
    found: dict[str, list[str]] = {"": list(_prose(document.get("metadata", {})))}
    nodes = document.get("nodes", [])
    for node in nodes if isinstance(nodes, list) else []:
        own = list(_prose(node)) if isinstance(node, dict) else []
        if own and isinstance(node_id := node.get("nodeId"), str):
            found[node_id] = own
    return found


def _prose(value: object, key: str = "") -> Iterator[str]:
    if key in _SKIPPED_KEYS:
        return
    if isinstance(value, dict):
        for child_key, child in value.items():
            yield from _prose(child, str(child_key))
    elif isinstance(value, list):
        for child in value:
            yield from _prose(child, key)
    elif isinstance(value, str) and " " in value.strip() and "://" not in value:
        yield value


def bias_recogniser(
    stt: object, package: AssessmentPackage, current_node: Callable[[], str | None] | None = None
) -> None:
    """Give an STT service that can be biased the package's text, per node, and
    ``current_node`` (the id of the node the candidate is answering, asked at each utterance):
    a recogniser with a language model (``use_exam_text``: PocketSphinx) the package's and each
    node's text for its models, one that reads context (``use_exam_prose``: Whisper) each
    node's own prose (:func:`node_prose`); hosted providers are left as they are."""
    use = getattr(stt, "use_exam_text", None)
    prose = getattr(stt, "use_exam_prose", None)
    if not callable(use) and not callable(prose):
        return
    document = package.model_dump(mode="json", by_alias=True, exclude_none=True)
    if callable(prose):
        prose(node_prose(document), current_node=current_node)
    if callable(use):
        use(package_texts(document), nodes=node_texts(document), current_node=current_node)
