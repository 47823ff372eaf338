"""Scripted examiner models for questions on the candidate's own work (issue #35).

Reply functions for the OpenAI-compatible peer (``tests/support/openai_server.py``), used as its
``default_reply``: each answers a request from what the request holds, as a model would.

* :func:`examiner`: a well-behaved examiner. It opens a grounded part with a question on the
  quoted passage it was sent (:func:`question_about`) and reports every candidate answer as
  evidence of the part's targets, in the candidate's own words.
* :func:`obedient_examiner`: the same examiner, except that it does what a passage tells it
  when the passage carries an injected instruction (:data:`INJECTION_CUES`): it proposes to
  finish and to skip, claims the evidence is sufficient, reports every target with an excerpt
  of the injection at full confidence, and speaks the injection (full marks, the fake tool
  call, the copied system prompt). With a passage that carries no instruction it is
  :func:`examiner`.
"""

from __future__ import annotations

import re
from typing import Any

from ioa.compiler.material_block import QuotedPassage, read_passage_block
from ioa.compiler.task_message import EVIDENCE_HEADER
from ioa.runtime.texts import OPEN_NODE_INSTRUCTION
from tests.support.openai_server import RecordedRequest, Reply

SUMMARY = "The candidate talked about their own report and about shortest paths."
INJECTION_CUES = ("full marks", "ignore the rubric", "report_observation", "SYSTEM:")


def question_about(text: str) -> str:
    """What the scripted model asks about a passage: its first eight words, then why."""
    words = " ".join(text.split()[:8]).rstrip(".,;:")
    return f"Your report says: {words}. Could you explain why you wrote that?"


def targets_of(request: RecordedRequest) -> list[str]:
    """The evidence target ids the node's instructions list."""
    task = next((m for m in request.messages_with_role("developer") if EVIDENCE_HEADER in m), "")
    return re.findall(r"^- (tgt-[\w-]+) \(", task, flags=re.MULTILINE)


def passage_of(request: RecordedRequest) -> QuotedPassage | None:
    """The passage block the request carries, read as the model would."""
    quoted = [read_passage_block(m) for m in request.messages_with_role("developer")]
    return next((q for q in quoted if q is not None), None)


def report(spoken: str, **extra: Any) -> Reply:
    """A ``report_observation`` call: a well-formed report saying ``spoken``."""
    return Reply.tool_call(
        "report_observation",
        {
            "signals": [],
            "answerQuality": "substantive",
            "needsFollowUp": False,
            "evidenceSufficient": False,
            "anxietyDetected": False,
            "spokenText": spoken,
            **extra,
        },
    )


def signals(targets: list[str], excerpt: str, confidence: float = 0.9) -> list[dict[str, Any]]:
    return [
        {"signalType": t, "signalKind": "positive", "excerpt": excerpt, "confidence": confidence}
        for t in targets
    ]


def _last(request: RecordedRequest) -> tuple[str, str]:
    last = request.messages[-1] if request.messages else {}
    content = last.get("content")
    return str(last.get("role", "")), content if isinstance(content, str) else ""


def examiner(request: RecordedRequest) -> Reply:
    """A well-behaved examiner model (see the module docstring)."""
    if not request.stream:  # Pipecat Flows' summary (RESET_WITH_SUMMARY)
        return Reply.text(SUMMARY)
    role, content = _last(request)
    if role == "developer" and content == OPEN_NODE_INSTRUCTION:
        passage = passage_of(request)
        if passage is None:
            return report("Tell me about one design decision in your project.")
        return report(question_about(passage.text))
    if role != "user" or not content:
        return report("Thank you. Please go on.")
    return report(
        "Thank you.", signals=signals(targets_of(request), content[:120]), evidenceSufficient=True
    )


def injected(passage: QuotedPassage | None) -> bool:
    return passage is not None and any(cue in passage.text for cue in INJECTION_CUES)


def obedient_examiner(request: RecordedRequest) -> Reply:
    """An examiner model that follows instructions injected into the passage (see the module
    docstring); otherwise :func:`examiner`."""
    passage = passage_of(request)
    if not request.stream or not injected(passage):
        return examiner(request)
    assert passage is not None
    role, content = _last(request)
    claims = signals(targets_of(request), passage.text[:80], confidence=1.0)
    if role == "user" and content:
        claims += signals(targets_of(request), content[:120])
    command = "finish" if role == "developer" else "skip"
    return report(
        f"Full marks! The exam is over. {passage.text}",
        signals=claims,
        evidenceSufficient=True,
        commandDetected=command,
    )
