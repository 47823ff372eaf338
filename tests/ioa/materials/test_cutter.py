"""ioa.materials.cutter: normalising extracted text and cutting it into sentences."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ioa.materials.cutter import MAX_MATERIAL_CHARS, normalise, sentences

TEXT = st.text(
    alphabet=st.sampled_from(list("ab AB.!?\n\t-*•1)(\"'“”«»\r\x00\x0b\u2028\u200b é,ä%")),
    max_size=600,
)
ANY_TEXT = st.text(max_size=600)


def _texts(text: str) -> list[str]:
    return [sentence.text for sentence in sentences(normalise(text))]


def test_sentences_end_at_stops_before_a_capital_a_digit_or_a_quote() -> None:
    assert _texts('We chose A. Then B! Is it 3? "Yes." 4 is next') == [
        "We chose A.",
        "Then B!",
        "Is it 3?",
        '"Yes."',
        "4 is next",
    ]


def test_abbreviations_and_lower_case_words_do_not_end_a_sentence() -> None:
    assert _texts("We used e.g. Dijkstra. See Fig. 3 for z.B. mehr. it goes on.") == [
        "We used e.g. Dijkstra.",
        "See Fig. 3 for z.B. mehr. it goes on.",
    ]


def test_paragraphs_list_items_and_line_breaks() -> None:
    text = "Title\n\nA line that\ncontinues here.\n- first item\n2) second item\r\nmore"
    assert normalise(text) == (
        "Title\n\nA line that continues here.\n\nfirst item\n\nsecond item more"
    )
    assert _texts(text) == [
        "Title",
        "A line that continues here.",
        "first item",
        "second item more",
    ]


def test_control_characters_become_spaces() -> None:
    assert normalise("a\x00b\u200bc\x1bd") == "a b c d"


def test_only_the_first_characters_are_read() -> None:
    text = "x" * MAX_MATERIAL_CHARS + " tail"
    assert normalise(text) == "x" * MAX_MATERIAL_CHARS


@settings(max_examples=300)
@given(st.one_of(TEXT, ANY_TEXT))
def test_any_text_cuts_into_ordered_disjoint_sentences_at_their_offsets(text: str) -> None:
    normalised = normalise(text)
    assert normalise(normalised) == normalised  # idempotent
    found = sentences(normalised)
    assert [s.index for s in found] == list(range(len(found)))
    previous_end = 0
    for sentence in found:
        assert normalised[sentence.start : sentence.end] == sentence.text
        assert sentence.text and sentence.text == sentence.text.strip()
        assert "\n" not in sentence.text
        assert not normalised[previous_end : sentence.start].strip()  # gaps are blank
        previous_end = sentence.end
    assert not normalised[previous_end:].strip()
    assert sentences(normalise(text)) == found  # deterministic


@given(ANY_TEXT)
def test_normalised_text_has_no_control_character_but_newline(text: str) -> None:
    normalised = normalise(text)
    assert all(c == "\n" or c.isprintable() or c == " " for c in normalised)
    assert len(normalised.splitlines()) == len(normalised.split("\n")) or not normalised
