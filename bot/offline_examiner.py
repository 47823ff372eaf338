"""The offline examiner: a deterministic, local stand-in for the LLM. REHEARSAL ONLY.

.. warning::
   This is a rehearsal examiner for demos, development, tests and load benchmarks. It matches
   words, it does not understand answers: **never use it for real grading**. Sessions it runs
   are marked: the lease's ``provider`` and every ``usage_reported`` event say
   ``offline`` / :data:`MODEL`, and ``bot_start`` refuses it unless
   ``VIVA_OFFLINE_EXAMINER_ALLOWED`` is on (the default only with ``DEBUG``).

It goes through exactly the same path as a real model: it is served as an OpenAI-compatible
Chat Completions endpoint (``POST /v1/chat/completions``, streaming Server-Sent Events with tool
calls, or one JSON object) on ``127.0.0.1`` in the bot's process (:class:`OfflineExaminerServer`),
and the bot's ordinary ``OpenAILLMService`` talks to it over HTTP. Its only tool use is
``report_observation``, whose handler is the runtime controller, as with any model.

What it does, from the request alone (no state between requests):

* reads its node's task message (``OPENING QUESTION``, ``BRIEF``, ``EVIDENCE TO LISTEN FOR``,
  the follow-up budget) and the conversation since it;
* after a candidate answer, calls ``report_observation``: each evidence target the
  lexical-semantic matcher (:mod:`bot.offline_matching`: synonyms, stems, negation, key
  concepts) finds in the answer becomes a ``positive`` signal; while targets remain
  uncovered and follow-ups remain, it asks a follow-up drawn from the prompt seed (the
  ``BRIEF``), otherwise it says the evidence is sufficient; short answers that are commands
  (repeat, rephrase, pause, skip, finish...) are reported as ``commandDetected``;
* after a runtime instruction (rephrase, clarify, open this part, continue, a proctor
  instruction), calls ``report_observation`` with what it will say;
* without tools (summaries), answers with a short extractive summary.

Openings are never improvised: the runtime speaks them verbatim.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, TypedDict

from bot.offline_matching import confidence, node_matcher
from ioa.compiler.material_block import MATERIAL_HEADER, QuotedPassage, read_passage_block
from ioa.languages import DEFAULT_LANGUAGE, directive_language
from ioa.materials import grounded_question
from ioa.runtime.agent_boundary import candidate_command, read_consent
from ioa.runtime.texts import OWED_ANSWER_INSTRUCTION, for_language

if TYPE_CHECKING:
    from aiohttp import web

MODEL: Final = "viva-offline-rehearsal-examiner"
PROVIDER: Final = "offline"
LABEL: Final = "REHEARSAL EXAMINER - NOT FOR GRADING"


def _word_set(text: str) -> frozenset[str]:
    return frozenset(re.findall(r"\S+", text))


STOPWORDS: Final = _word_set(
    """a an and are as at be been but by can could do does for from had has have how i if in
    into is it its it's me my no not of on or our so such than that the their them then there
    these they this to too up us was we were what when where which while who why will with
    would you your yes also just very really about some any each more most other
    der die das den dem des ein eine einen einem einer und oder aber auch noch nur sehr so zu
    zum zur im in am an auf aus bei mit nach von vor für über um durch ist sind war bin hat
    haben wird werden kann können ich sie es wir mir mich was wie wo wenn als dass weil gerne
    mag dann dieser diese dieses jeder jede jedes sich man nicht kein keine
    el la los las un una y o pero de del al en con por para es son me mi yo lo que se su sus
    muy más como cuando porque este esta esto cada también no
    """
)
GENERIC: Final = _word_set(
    """candidate says say explains explain states state identifies identify names name picks
    pick describes describe mentions mention justifies justify uses use using gives give shows
    show either such already"""
)
IRREGULAR: Final = {"vertices": "vertex", "indices": "index", "matrices": "matrix"}

COMMAND_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("request_rephrase", re.compile(r"\b(rephrase|another way|other words|reword)\b")),
    ("repeat", re.compile(r"\b(repeat|say (that|it) again|once more|pardon)\b")),
    (
        "clarification",
        re.compile(r"\b(clarify|what do you mean|don'?t understand the question|meaning of)\b"),
    ),
    ("slow_down", re.compile(r"\b(slow down|slower|too fast)\b")),
    ("pause", re.compile(r"\b(pause|(take|need) a break)\b")),
    ("skip", re.compile(r"\b(skip|next question|pass on this)\b")),
    ("finish", re.compile(r"\b(finish|end the (exam|examination)|stop the (exam|examination))\b")),
    ("thinking_aloud", re.compile(r"\b(let me think|thinking time|need a moment)\b")),
    ("help", re.compile(r"^\W*help\W*$|\bhow does this work\b")),
)
MAX_COMMAND_WORDS: Final = 12
FOLLOW_UP_LEAD: Final = "Could you say a little more about {topic}?"
GENERIC_FOLLOW_UP: Final = "Could you say a little more about how you would approach this?"
THANKS: Final = "Thank you."


@dataclass(frozen=True, slots=True)
class Lines:
    """What the offline examiner itself says, in one language (the exam's: the compiled role
    message names it, :func:`ioa.languages.language_directive`)."""

    thanks: str
    take_time: str
    of_course: str
    stay: str
    """Followed by the opening question."""
    go_on: str
    go_ahead: str
    another_way: str
    """Followed by the question."""
    to_clarify: str
    """Followed by the question."""
    reasoning: str
    generic_follow_up: str


LINES: Final = {
    "en": Lines(
        thanks=THANKS,
        take_time="Take your time.",
        of_course="Of course.",
        stay="Let's stay with the question.",
        go_on="Please go on.",
        go_ahead="Please go ahead.",
        another_way="Let me put it another way.",
        to_clarify="To clarify, the question is:",
        reasoning="Could you explain the reasoning behind your view?",
        generic_follow_up=GENERIC_FOLLOW_UP,
    ),
    "de": Lines(
        thanks="Vielen Dank.",
        take_time="Nehmen Sie sich Zeit.",
        of_course="Selbstverständlich.",
        stay="Bleiben wir bei der Frage.",
        go_on="Bitte fahren Sie fort.",
        go_ahead="Bitte beginnen Sie.",
        another_way="Ich formuliere es anders.",
        to_clarify="Zur Klarstellung, die Frage lautet:",
        reasoning="Können Sie die Überlegung hinter Ihrer Sicht erklären?",
        generic_follow_up="Können Sie etwas genauer sagen, wie Sie dabei vorgehen würden?",
    ),
    "es": Lines(
        thanks="Gracias.",
        take_time="Tómese su tiempo.",
        of_course="Por supuesto.",
        stay="Sigamos con la pregunta.",
        go_on="Continúe, por favor.",
        go_ahead="Adelante, por favor.",
        another_way="Se lo pregunto de otra manera.",
        to_clarify="Para aclararlo, la pregunta es:",
        reasoning="¿Podría explicar el razonamiento de su punto de vista?",
        generic_follow_up="¿Podría explicar un poco más cómo lo abordaría?",
    ),
}
"""Per supported language (:data:`ioa.languages.SUPPORTED_LANGUAGES`)."""


def words(text: str) -> list[str]:
    """Lower-case word tokens."""
    return re.findall(r"[^\W_][\w'+^()/-]*", text.lower())


def stem(word: str) -> str:
    """A tiny, deterministic stemmer (plurals, possessives)."""
    word = word.strip("'()/-").removesuffix("'s")
    if word in IRREGULAR:
        return IRREGULAR[word]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith(("ches", "shes", "sses", "xes", "zes")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_words(text: str) -> set[str]:
    """The stemmed content words of ``text`` (stop words and generic rubric verbs removed)."""
    out = set()
    for token in words(text):
        stemmed = stem(token)
        if len(stemmed) < 2 or stemmed in STOPWORDS or stemmed in GENERIC:
            continue
        out.add(stemmed)
    return out


@dataclass(frozen=True, slots=True)
class Target:
    """One evidence target as the task message lists it."""

    id: str
    label: str
    description: str

    @property
    def vocabulary(self) -> set[str]:
        return content_words(f"{self.label} {self.description}")


@dataclass(frozen=True, slots=True)
class Brief:
    """What the offline examiner reads in its node's task message."""

    opening: str = ""
    seed: str = ""
    targets: tuple[Target, ...] = ()
    max_follow_ups: int = 0


_TARGET_LINE: Final = re.compile(r"^- (\S+) \((.+)\): (.+)$")
_BLOCK_HEADERS: Final = (
    "PART:",
    "SCENARIO:",
    "BRIEF:",
    "OPENING QUESTION:",
    "EVIDENCE TO LISTEN FOR",
    "CONSTRAINTS:",
    "Do NOT:",
    "You may:",
    "REPORTING:",
    "CONSISTENCY:",
    "ANXIETY AND DISTRESS:",
    "CLOSING:",
)


def parse_brief(task: str) -> Brief:
    """Read the blocks of a compiled task message (``ioa/compiler/task_message.py``)."""
    blocks: dict[str, list[str]] = {}
    current: str | None = None
    for line in task.splitlines():
        header = next((h for h in _BLOCK_HEADERS if line.startswith(h)), None)
        if header is not None:
            current = header
            rest = line[len(header) :].strip()
            blocks[current] = [rest] if rest and not rest.startswith("(") else []
        elif current is not None:
            blocks[current].append(line)
    opening_lines = [
        line
        for line in blocks.get("OPENING QUESTION:", [])
        if line.strip() and not line.startswith("Start this part")
    ]
    targets = []
    for line in blocks.get("EVIDENCE TO LISTEN FOR", []):
        match = _TARGET_LINE.match(line.strip())
        if match:
            targets.append(Target(match.group(1), match.group(2), match.group(3)))
    budget = 0
    constraints = " ".join(blocks.get("CONSTRAINTS:", []))
    found = re.search(r"at most (\d+) follow-up", constraints)
    if found:
        budget = int(found.group(1))
    return Brief(
        opening=" ".join(line.strip() for line in opening_lines).strip(),
        seed=" ".join(line.strip() for line in blocks.get("BRIEF:", []) if line.strip()),
        targets=tuple(targets),
        max_follow_ups=budget,
    )


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", text) if s.strip()]


_LEAD: Final = re.compile(
    r"^(?:then\s+)?(?:probe|check|explore|ask)(?:\s+the candidate)?"
    r"(?:\s+(?:for|about|on))?\s+",
    re.IGNORECASE,
)
_ASK_CLAUSE: Final = re.compile(r"\bask\s+(what|whether|how|why|which|if)\b\s+(.+)", re.IGNORECASE)


def seed_questions(seed: str) -> list[str]:
    """Candidate follow-up questions drawn from the prompt seed, in seed order."""
    questions: list[str] = []
    for sentence in sentences(seed):
        lowered = sentence.lower()
        if lowered.startswith(("do not", "don't", "never", "avoid")):
            continue
        clause = _ASK_CLAUSE.search(sentence)
        if clause:
            word, rest = clause.group(1).lower(), clause.group(2).rstrip(" .!?")
            if word in ("whether", "if"):
                questions.append(f"Could you tell me whether {rest}?")
            else:
                questions.append(f"{word.capitalize()} {rest}?")
            continue
        lead = _LEAD.match(sentence)
        if not lead:
            continue
        body = sentence[lead.end() :].rstrip(" .!?")
        for fragment in re.split(r",\s*(?:and\s+)?|\s+and\s+", body):
            fragment = fragment.strip()
            if len(content_words(fragment)) >= 1 and not fragment.lower().startswith("to "):
                questions.append(FOLLOW_UP_LEAD.format(topic=fragment))
    return questions


@dataclass
class Conversation:
    """The part of a request the examiner reasons about."""

    brief: Brief
    answer: str
    """The candidate's latest turn(s) since the examiner last acted."""
    covered: set[str] = field(default_factory=set)
    follow_ups_used: int = 0
    asked: list[str] = field(default_factory=list)
    """What the examiner said at this node (assistant texts and earlier spokenText)."""
    instruction: str | None = None
    last_examiner: str = ""
    last_answer: str = ""
    """The candidate's latest turn(s), even if an observation about them was already made."""
    last_call_signals: set[str] = field(default_factory=set)
    """Targets signalled by the examiner's latest report."""
    language: str = DEFAULT_LANGUAGE
    """The exam's language (from the role message's directive; English without one)."""
    passage: QuotedPassage | None = None
    """A grounded node's quoted passage (the runtime's task addition), if one was drawn."""

    @property
    def lines(self) -> Lines:
        return LINES.get(self.language, LINES[DEFAULT_LANGUAGE])


def _text(message: Mapping[str, object]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(part.get("text", "")) for part in content if isinstance(part, Mapping))
    return ""


def _listed(value: object) -> list[object]:
    """``value`` if it is a JSON array, else empty."""
    return list(value) if isinstance(value, list) else []


def _reported(message: Mapping[str, object]) -> Iterator[Mapping[str, object]]:
    """The arguments of each ``report_observation`` call of an assistant message (calls whose
    arguments are not a JSON object are skipped)."""
    for call in _listed(message.get("tool_calls")):
        function = call.get("function") if isinstance(call, Mapping) else None
        if not isinstance(function, Mapping) or function.get("name") != "report_observation":
            continue
        try:
            args = json.loads(function.get("arguments") or "{}")
        except ValueError:
            continue
        if isinstance(args, Mapping):
            yield args


def _is_task_message(message: Mapping[str, object]) -> bool:
    """Whether ``message`` is a node's task message: it has an opening question, or (a grounded
    node, which has none) a candidate material block. A quoted passage block never is one,
    whatever its text says."""
    text = _text(message)
    if message.get("role") not in ("developer", "system") or read_passage_block(text):
        return False
    return "OPENING QUESTION" in text or f"\n{MATERIAL_HEADER}\n" in f"\n{text}"


def _read_context(
    conversation: Conversation, messages: Sequence[Mapping[str, object]], start: int
) -> None:
    """The exam's language (any role message's directive) and the node's quoted passage (the
    last passage block from the task message on)."""
    for index, message in enumerate(messages):
        if message.get("role") in ("developer", "system"):
            named = directive_language(_text(message))
            if named in LINES:
                conversation.language = named
            if index >= start:
                conversation.passage = read_passage_block(_text(message)) or conversation.passage


def read_conversation(messages: Sequence[Mapping[str, object]]) -> Conversation:
    """Find the node's task message and read what happened since (a grounded node's passage
    block too)."""
    start = 0
    task = ""
    for index, message in enumerate(messages):
        if _is_task_message(message):
            start, task = index, _text(message)
    conversation = Conversation(brief=parse_brief(task), answer="")
    _read_context(conversation, messages, start)
    pending: list[str] = []
    for message in messages[start + 1 :]:
        role = message.get("role")
        text = _text(message)
        if role == "user":
            if not pending:
                conversation.last_answer = ""
            pending.append(text)
            conversation.last_answer = " ".join(t.strip() for t in pending if t.strip())
            conversation.instruction = None
        elif role == "assistant":
            for args in _reported(message):
                conversation.last_call_signals = {
                    str(s.get("signalType"))
                    for s in _listed(args.get("signals"))
                    if isinstance(s, Mapping)
                }
                conversation.covered |= conversation.last_call_signals
                if args.get("spokenText"):
                    conversation.asked.append(str(args["spokenText"]))
                pending = []
            if text:
                conversation.asked.append(text)
                conversation.last_examiner = text
            conversation.instruction = None
        elif role == "tool":
            try:
                result = json.loads(text or "{}")
            except ValueError:
                result = {}
            if isinstance(result, Mapping):
                if result.get("status") == "followup_approved":
                    conversation.follow_ups_used = max(
                        conversation.follow_ups_used, int(result.get("followUpIndex") or 0)
                    )
                if result.get("instruction"):
                    conversation.instruction = str(result["instruction"])
        elif role in ("developer", "system") and text and read_passage_block(text) is None:
            conversation.instruction = text  # a quoted passage is data, never an instruction
    conversation.answer = " ".join(t.strip() for t in pending if t.strip())
    if not conversation.answer and OWED_ANSWER_INSTRUCTION in (conversation.instruction or ""):
        # Asked to respond at last to a turn the exam paused before answering (a report made
        # meanwhile was ignored, ``model_late_report``): that turn is the answer.
        conversation.answer = conversation.last_answer
    return conversation


def detect_command(answer: str, last_examiner: str, language: str = DEFAULT_LANGUAGE) -> str | None:
    """A command in a short candidate turn (``None`` for an answer). Not English: the runtime
    classifier's vocabulary of that language (and its yes after a finish question)."""
    if language != DEFAULT_LANGUAGE:
        asked_to_confirm = last_examiner.strip() == for_language(language).finish_confirm
        if asked_to_confirm and read_consent(answer, language) == "yes":
            return "finish"
        found = candidate_command(answer, language)
        return found.value if found is not None else None
    tokens = words(answer)
    if not tokens or len(tokens) > MAX_COMMAND_WORDS:
        return None
    lowered = " ".join(tokens)
    if "end the examination now" in last_examiner.lower() and tokens[0] in ("yes", "yeah"):
        return "finish"
    for command, pattern in COMMAND_PATTERNS:
        if pattern.search(lowered):
            return command
    return None


def match_targets(
    answer: str,
    targets: Sequence[Target],
    *,
    context: str = "",
    language: str = DEFAULT_LANGUAGE,
) -> list[tuple[Target, float]]:
    """Targets the answer covers, with a confidence: the lexical-semantic matcher of
    :mod:`bot.offline_matching` (synonyms, stems, negation, key concepts weighted over the
    node's own texts; ``context`` is the node's opening question)."""
    if not targets:
        return []
    matcher = node_matcher(targets, context, language)
    return [
        (targets[judgement.target_index], confidence(judgement))
        for judgement in matcher.judge_all(answer)
        if judgement.met
    ]


def excerpt(answer: str, target: Target, language: str = DEFAULT_LANGUAGE) -> str:
    """The answer's sentence that shows most of the target (at most 200 chars)."""
    matcher = node_matcher([target], language=language)
    best = max(sentences(answer) or [answer], key=lambda s: matcher.judge(s, 0).score)
    return best[:200]


def choose_follow_up(conversation: Conversation, uncovered: Sequence[Target]) -> str | None:
    """A follow-up from the prompt seed aimed at an uncovered target (never one already
    asked), else a neutral generic one once; ``None`` when there is nothing left to ask."""
    asked = {a.strip().lower() for a in conversation.asked}
    options = [q for q in seed_questions(conversation.brief.seed) if q.strip().lower() not in asked]
    best: tuple[int, str] | None = None
    for target in uncovered:
        vocabulary = target.vocabulary
        for question in options:
            score = len(content_words(question) & vocabulary)
            if score and (best is None or score > best[0]):
                best = (score, question)
    if best is not None:
        return best[1]
    generic = conversation.lines.generic_follow_up
    if generic.lower() not in asked:
        return generic
    return None


class Signal(TypedDict):
    """One evidence signal of a ``report_observation`` call."""

    signalType: str
    signalKind: str
    excerpt: str
    confidence: float


class ObservationArguments(TypedDict, total=False):
    """The ``report_observation`` arguments the offline examiner gives."""

    signals: list[Signal]
    answerQuality: str
    needsFollowUp: bool
    followUpType: str
    evidenceSufficient: bool
    anxietyDetected: bool
    distressDetected: bool
    commandDetected: str
    spokenText: str


def observation(conversation: Conversation) -> ObservationArguments:
    """The ``report_observation`` arguments for a candidate answer."""
    brief, answer = conversation.brief, conversation.answer
    base: ObservationArguments = {
        "signals": [],
        "answerQuality": "substantive",
        "needsFollowUp": False,
        "evidenceSufficient": False,
        "anxietyDetected": False,
        "distressDetected": False,
        "spokenText": conversation.lines.thanks,
    }
    if not answer.strip():
        return {**base, "answerQuality": "silence", "spokenText": conversation.lines.take_time}
    command = detect_command(answer, conversation.last_examiner, conversation.language)
    if command is not None:
        return {**base, "commandDetected": command, "spokenText": conversation.lines.of_course}
    language = conversation.language
    matched = match_targets(answer, brief.targets, context=brief.opening, language=language)
    signals: list[Signal] = [
        {
            "signalType": target.id,
            "signalKind": "positive",
            "excerpt": excerpt(answer, target, language),
            "confidence": confidence,
        }
        for target, confidence in matched
        if target.id not in conversation.covered
    ]
    covered = conversation.covered | {target.id for target, _ in matched}
    uncovered = [t for t in brief.targets if t.id not in covered]
    said = content_words(answer)
    if not brief.targets or matched:
        quality = "substantive"
    elif any(t.vocabulary & said for t in brief.targets):
        quality = "partial"
    else:
        quality = "off_topic" if len(said) >= 3 else "unclear"
    follow_ups_left = brief.max_follow_ups - conversation.follow_ups_used
    follow_up = (
        choose_follow_up(conversation, uncovered)
        if uncovered and follow_ups_left > 0 and quality in ("substantive", "partial")
        else None
    )
    if follow_up is not None:
        return {
            **base,
            "signals": signals,
            "answerQuality": quality,
            "needsFollowUp": True,
            "followUpType": "probe",
            "spokenText": follow_up,
        }
    if quality in ("off_topic", "unclear") and brief.opening:
        return {
            **base,
            "answerQuality": quality,
            "spokenText": f"{conversation.lines.stay} {brief.opening}",
        }
    return {**base, "signals": signals, "answerQuality": quality, "evidenceSufficient": True}


def instructed(conversation: Conversation, instruction: str) -> ObservationArguments:
    """The ``report_observation`` arguments after a runtime instruction."""
    lowered = instruction.lower()
    lines = conversation.lines
    question = conversation.last_examiner or conversation.brief.opening or ""
    base: ObservationArguments = {
        "signals": [],
        "answerQuality": "substantive",
        "needsFollowUp": False,
        "evidenceSufficient": False,
        "anxietyDetected": False,
        "spokenText": lines.go_on,
    }
    if lowered.startswith("proctor instruction"):
        text = instruction.split(":", 1)[1].strip() if ":" in instruction else instruction
        return {**base, "spokenText": text or lines.go_on}
    if "rephrase" in lowered:
        return {**base, "spokenText": f"{lines.another_way} {question}"}
    if "clarification" in lowered or "clarify" in lowered:
        return {**base, "spokenText": f"{lines.to_clarify} {question}"}
    if "premise" in lowered:
        return {**base, "spokenText": lines.reasoning}
    if "open this part" in lowered:
        return {**base, "spokenText": opening_of(conversation)}
    if "went wrong" in lowered and conversation.last_answer:
        # The previous report was lost: report the same answer again.
        retry = Conversation(
            brief=conversation.brief,
            answer=conversation.last_answer,
            covered=conversation.covered - conversation.last_call_signals,
            follow_ups_used=conversation.follow_ups_used,
            asked=conversation.asked,
            last_examiner=conversation.last_examiner,
            language=conversation.language,
        )
        return observation(retry)
    if "not approved moving on" in lowered:
        budget = conversation.brief.max_follow_ups - conversation.follow_ups_used
        uncovered = [t for t in conversation.brief.targets if t.id not in conversation.covered]
        follow_up = choose_follow_up(conversation, uncovered) if budget > 0 and uncovered else None
        if follow_up is not None:
            return {
                **base,
                "needsFollowUp": True,
                "followUpType": "probe",
                "spokenText": follow_up,
            }
        asked = {a.strip().lower() for a in conversation.asked}
        generic = lines.generic_follow_up
        text = generic if generic.lower() not in asked else lines.go_on
        return {**base, "spokenText": text}
    return base


def opening_of(conversation: Conversation) -> str:
    """How the examiner opens a part it is asked to open: a grounded node's question about its
    quoted passage (``ioa.materials.grounded_question``), else the node's opening."""
    passage = conversation.passage
    if passage is not None:
        return grounded_question(passage.text, passage.cue, conversation.language)
    return conversation.brief.opening or conversation.lines.go_ahead


RECOGNISED: Final = (
    "proctor instruction",
    "rephrase",
    "clarif",
    "premise",
    "open this part",
    "not approved moving on",
    "went wrong",
)


@dataclass(frozen=True, slots=True)
class Reply:
    """What the offline examiner answers: text, or one tool call."""

    content: str = ""
    tool_arguments: ObservationArguments | None = None


def respond(body: Mapping[str, object]) -> Reply:
    """The examiner's answer to one Chat Completions request body (pure, deterministic)."""
    messages = [m for m in _listed(body.get("messages")) if isinstance(m, Mapping)]
    tools = [
        t.get("function", {}).get("name")
        for t in _listed(body.get("tools"))
        if isinstance(t, Mapping)
    ]
    if "report_observation" not in tools:
        return Reply(content=summary(messages))
    conversation = read_conversation(messages)
    instruction = conversation.instruction
    if instruction is not None and any(key in instruction.lower() for key in RECOGNISED):
        return Reply(tool_arguments=instructed(conversation, instruction))
    return Reply(tool_arguments=observation(conversation))


def summary(messages: Sequence[Mapping[str, object]]) -> str:
    """A short extractive summary of the candidate's turns (used for context summaries)."""
    said = [_text(m) for m in messages if m.get("role") == "user" and _text(m).strip()]
    if not said:
        return "No candidate answers so far."
    parts = [" ".join(text.split()[:25]) for text in said[-6:]]
    return "The candidate said: " + " / ".join(parts)


def approximate_tokens(text: str) -> int:
    """A rough token count (4 characters a token) for usage reports."""
    return max(1, len(text) // 4)


# --- the OpenAI-compatible server -----------------------------------------------------------------


class OfflineExaminerServer:
    """Serves :func:`respond` as ``/v1/chat/completions`` on ``127.0.0.1`` from a daemon thread
    with its own event loop (so it outlives any one bot's loop). Use :func:`shared_server`."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0) -> None:
        self.host = host
        self._port = port
        self._ids = itertools.count(1)
        self._thread: threading.Thread | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self.requests = 0

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self._port}/v1"

    def start(self) -> OfflineExaminerServer:
        if self._thread is not None:
            return self
        self._thread = threading.Thread(target=self._run, name="offline-examiner", daemon=True)
        self._thread.start()
        self._ready.wait(timeout=30)
        if self._error is not None:
            raise RuntimeError("the offline examiner could not start") from self._error
        return self

    def _run(self) -> None:
        self._loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException as exc:  # reported to start()
            self._error = exc
            self._ready.set()

    async def _serve(self) -> None:
        from aiohttp import web

        app = web.Application(client_max_size=32 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, self.host, self._port)
        await site.start()
        for address in runner.addresses:
            if isinstance(address, tuple) and len(address) >= 2:
                self._port = int(address[1])
                break
        self._ready.set()
        await asyncio.Event().wait()

    async def _models(self, request: web.Request) -> web.Response:
        from aiohttp import web

        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}]})

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        from aiohttp import web

        self.requests += 1
        try:
            body: object = await request.json()
        except ValueError:
            return web.json_response({"error": {"message": "body is not JSON"}}, status=400)
        if not isinstance(body, Mapping):
            refused = {"error": {"message": "body is not a JSON object"}}
            return web.json_response(refused, status=400)
        reply = respond(body)
        messages = [m for m in _listed(body.get("messages")) if isinstance(m, Mapping)]
        prompt = sum(approximate_tokens(_text(m)) for m in messages)
        output = approximate_tokens(reply.content or json.dumps(dict(reply.tool_arguments or {})))
        usage = {
            "prompt_tokens": prompt,
            "completion_tokens": output,
            "total_tokens": prompt + output,
        }
        completion_id = f"chatcmpl-offline-{next(self._ids)}"
        if not body.get("stream"):
            return web.json_response(self._completion(completion_id, reply, usage))
        response = web.StreamResponse(
            headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
        )
        await response.prepare(request)
        stream_options = body.get("stream_options")
        include_usage = isinstance(stream_options, Mapping) and bool(
            stream_options.get("include_usage")
        )
        async for chunk in self._chunks(completion_id, reply, usage if include_usage else None):
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    def _completion(
        self, completion_id: str, reply: Reply, usage: Mapping[str, int]
    ) -> dict[str, object]:
        message: dict[str, object] = {"role": "assistant", "content": reply.content or None}
        if reply.tool_arguments is not None:
            message["tool_calls"] = [
                {
                    "id": f"call_{completion_id}",
                    "type": "function",
                    "function": {
                        "name": "report_observation",
                        "arguments": json.dumps(dict(reply.tool_arguments)),
                    },
                }
            ]
        finish = "tool_calls" if reply.tool_arguments is not None else "stop"
        return {
            "id": completion_id,
            "object": "chat.completion",
            "created": 0,
            "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": dict(usage),
        }

    async def _chunks(
        self, completion_id: str, reply: Reply, usage: Mapping[str, int] | None
    ) -> AsyncIterator[dict[str, object]]:
        for chunk in _stream_chunks(completion_id, reply, usage):
            yield chunk


def _stream_chunks(
    completion_id: str, reply: Reply, usage: Mapping[str, int] | None
) -> Iterator[dict[str, object]]:
    def chunk(delta: dict[str, object], finish: str | None = None) -> dict[str, object]:
        return {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": MODEL,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
        }

    yield chunk({"role": "assistant", "content": ""})
    if reply.content:
        yield chunk({"content": reply.content})
    if reply.tool_arguments is not None:
        head = {"index": 0, "id": f"call_{completion_id}", "type": "function"}
        arguments = json.dumps(dict(reply.tool_arguments))
        yield chunk(
            {"tool_calls": [{**head, "function": {"name": "report_observation", "arguments": ""}}]}
        )
        yield chunk({"tool_calls": [{"index": 0, "function": {"arguments": arguments}}]})
    yield chunk({}, "tool_calls" if reply.tool_arguments is not None else "stop")
    if usage is not None:
        yield {
            "id": completion_id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": MODEL,
            "choices": [],
            "usage": dict(usage),
        }


_server: OfflineExaminerServer | None = None
_server_lock = threading.Lock()


def shared_server() -> OfflineExaminerServer:
    """The process's offline examiner server (started on first use)."""
    global _server
    with _server_lock:
        if _server is None:
            _server = OfflineExaminerServer().start()
        return _server
