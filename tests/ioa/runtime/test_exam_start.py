"""Nothing said before Start is an answer (issue #30).

Seen before: speech in the room before the candidate pressed Start became the first answer.
The runtime now ignores a segment whose speech began before the exam started, and the first
node starts from an empty LLM context whatever its own strategy.
"""

from __future__ import annotations

from ioa.runtime import BotReady, CandidateReady, EnterNode, TranscriptSegment
from tests.ioa.builders import example, node
from tests.ioa.runtime.harness import Harness


def test_speech_that_was_over_before_start_is_not_an_answer() -> None:
    h = Harness()
    h.at(0)
    h.send(BotReady("voice"))
    h.at(10)
    h.send(CandidateReady())  # the exam starts 10 s after the session opened
    h.at(14)
    late = h.send(TranscriptSegment("candidate", "sorry could you do you that", 0.8, 6000, 9500))
    assert late.result["status"] == "ignored"
    assert h.of("transcript_final") == []
    # Speech running across the start counts: the candidate was answering as it began.
    across = h.send(TranscriptSegment("candidate", "Graph algorithms,", 0.9, 9000, 11000))
    assert across.result["status"] == "recorded"
    heard = h.send(TranscriptSegment("candidate", "mostly shortest paths.", 0.9, 12000, 13800))
    assert heard.result["status"] == "recorded"
    texts = [t.text for t in h.of("transcript_final")]
    assert texts == ["Graph algorithms,", "mostly shortest paths."]


def test_the_first_node_starts_from_an_empty_context_whatever_its_strategy() -> None:
    document = example()
    node(document, "warmup")["contextPolicy"] = {"strategy": "append"}
    h = Harness(document).start()
    (first,) = [e for e in h.effects if isinstance(e, EnterNode)]
    assert first.node_id == "warmup" and first.starts_exam
    assert first.context_strategy == "reset"
    h.to_q1()
    later = [e for e in h.effects if isinstance(e, EnterNode)][-1]
    assert later.node_id == "q-dijkstra" and not later.starts_exam
