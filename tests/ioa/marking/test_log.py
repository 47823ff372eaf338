"""The marker's reading of the log (``ioa.marking.log``): every type it reads has a reader.

A type listed in ``READ_TYPES`` without a reader made ``read_log`` fail with a ``KeyError`` on
the first such event of any session, so marking of that session stopped; nothing else checked
the two tables against each other (found while writing docs/adding-an-event-type.md).
"""

from __future__ import annotations

from ioa.events import EventType
from ioa.marking.log import _READERS, READ_TYPES, DrawnPassage, read_log
from tests.ioa.marking.builders import Log


def test_every_type_the_marker_reads_has_exactly_one_reader() -> None:
    assert set(_READERS) == set(READ_TYPES)


def test_every_type_the_marker_reads_is_an_event_type() -> None:
    assert set(READ_TYPES) <= {t.value for t in EventType}


def test_the_drawn_passage_and_the_evidence_about_it_are_read() -> None:
    log = Log().enter("q-own")
    log.add(
        "passage_drawn",
        nodeId="q-own",
        outcome="drawn",
        pick="choice",
        materialKind="report",
        drawKey="passage|q-own",
        optionCount=3,
        materialId="rep",
        passageId="rep:4",
        cue="choice",
        text="We chose a heap instead of a sorted list for the queue.",
    )
    turn = log.turn("A heap gives logarithmic inserts.")
    signal_id = log.signal("tgt-q-own", "positive", turns=[turn], passageId="rep:4")
    read = read_log(log.events)
    assert read.passages == {
        "q-own": DrawnPassage(
            seq=2,
            node_id="q-own",
            outcome="drawn",
            passage_id="rep:4",
            cue="choice",
            text="We chose a heap instead of a sorted list for the queue.",
        )
    }
    assert read.signals[signal_id].passage_id == "rep:4"


def test_a_fallback_is_read_without_a_passage() -> None:
    log = Log().enter("q-own")
    log.add(
        "passage_drawn",
        nodeId="q-own",
        outcome="no_material",
        pick="any",
        materialKind="submission",
        drawKey="passage|q-own",
        optionCount=0,
    )
    read = read_log(log.events)
    assert read.passages["q-own"].passage_id is None
    assert read.passages["q-own"].outcome == "no_material"
