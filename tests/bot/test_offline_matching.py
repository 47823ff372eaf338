"""The offline examiner's lexical-semantic matcher (issue #31): paraphrased correct answers are
credited, incorrect or vague ones that reuse the target's words are not, on the labelled sets of
``tests/bot/offline_matching/`` (main and held-out together), per example package."""

from __future__ import annotations

import pytest

from bot.offline_examiner import Target, excerpt, match_targets
from bot.offline_matching import NodeMatcher, lexicon, node_matcher, read
from tests.bot.offline_matching import PACKAGES, SETS, Item, items, score, total

MIN_RECALL = 0.85
MAX_FALSE_POSITIVES = 0.10

GREEDY = Target(
    "tgt-greedy-choice",
    "Greedy selection of the closest unsettled vertex",
    "Candidate says the algorithm repeatedly settles the unvisited vertex with the smallest "
    "tentative distance and relaxes its outgoing edges.",
)
NEGATIVE = Target(
    "tgt-negative-weights",
    "Limitation on negative edge weights",
    "Candidate explains that a negative edge can invalidate an already settled distance and "
    "names an alternative such as Bellman-Ford.",
)
CHOOSE = Target(
    "tgt-choose-algorithm",
    "Chooses and justifies a single-source algorithm",
    "Candidate picks a single-source shortest-path algorithm and justifies it by the "
    "non-negative travel times.",
)
MODEL = Target(
    "tgt-model-graph",
    "Models the problem as a weighted graph",
    "Candidate identifies shops and depot as vertices and roads as weighted edges.",
)
DELIVERY = (
    "Here is a practical problem. A bakery delivers from one depot to thirty shops, and each road "
    "has a travel time. How would you compute the fastest route to every shop?"
)


def now(answer: str, targets: object, opening: str, language: str) -> list[str]:
    assert isinstance(targets, tuple)
    found = match_targets(answer, [Target(*t) for t in targets], context=opening, language=language)
    return [target.id for target, _ in found]


@pytest.mark.parametrize("package", PACKAGES)
def test_paraphrases_are_credited_and_lookalikes_are_not(package: str) -> None:
    results = [score(package, which, now) for which in SETS]
    combined = total([result for result, _ in results])
    wrong: list[Item] = [item for _, missed in results for item in missed]
    assert combined.recall >= MIN_RECALL, (combined, wrong)
    assert combined.false_positive_rate <= MAX_FALSE_POSITIVES, (combined, wrong)


def test_every_target_has_enough_labelled_answers() -> None:
    for package in PACKAGES:
        for which, least in (("main", 4), ("heldout", 2)):
            counts: dict[tuple[str, bool], int] = {}
            for item in items(package, which):
                key = (item.target, item.covers)
                counts[key] = counts.get(key, 0) + 1
            targets = {target for target, _ in counts}
            for target in targets:
                assert counts.get((target, True), 0) >= least, (package, which, target)
                assert counts.get((target, False), 0) >= least, (package, which, target)


def test_synonyms_meet_the_target_s_words() -> None:
    said = "it always picks the closest node that isn't finalised yet and updates its neighbours"
    assert [t.id for t, _ in match_targets(said, [GREEDY, NEGATIVE])] == [GREEDY.id]
    concepts = read("nearest node, mark it done, lower", lexicon("en")).concepts
    assert {"smallest", "vertex", "settled", "relax"} <= concepts


def test_a_negated_concept_is_not_the_concept() -> None:
    lex = lexicon("en")
    assert "settled" not in read("the node isn't finalised yet", lex).concepts
    assert "not:settled" in read("the node isn't finalised yet", lex).concepts
    assert "not:settled" in read("the unvisited vertex", lex).concepts
    assert "nonnegative" in read("travel times can't be negative", lex).concepts
    assert "nonnegative" in read("no road takes a negative time", lex).concepts
    assert "negative" not in read("they are never below zero", lex).concepts


def test_negation_and_opposites_withhold_credit() -> None:
    right = "I'd use dijkstra from the depot because travel times can't be negative"
    wrong = "I'd use dijkstra from the depot because travel times are negative"
    assert match_targets(right, [CHOOSE])
    assert not match_targets(wrong, [CHOOSE])
    largest = "it always takes the vertex with the largest distance and relaxes its edges"
    assert not match_targets(largest, [GREEDY])


def test_saying_one_does_not_know_withholds_credit() -> None:
    said = "I don't really know how it settles the vertices, something with the edges."
    assert not match_targets(said, [GREEDY, NEGATIVE])
    assert read(said, lexicon("en")).unknown


def test_a_bare_name_is_not_a_justification() -> None:
    assert not match_targets("dijkstra i guess", [CHOOSE])


def test_a_misspelt_word_meets_its_target_word() -> None:
    said = "belman ford, since a negative edge can make an already settled distance wrong"
    assert match_targets(said, [NEGATIVE])


def test_the_excerpt_is_the_sentence_that_shows_the_target() -> None:
    said = "I enjoyed the course. It grabs the nearest unvisited node and updates its neighbours."
    assert excerpt(said, GREEDY).startswith("It grabs the nearest")


def test_the_question_s_words_weigh_less() -> None:
    opening = "How does Dijkstra's algorithm find shortest paths from a single source?"
    with_context = node_matcher([GREEDY, NEGATIVE], opening)
    without = node_matcher([GREEDY, NEGATIVE])

    def share(matcher: NodeMatcher) -> float:
        return matcher.weights["algorithm"] / matcher.weights["greedy"]

    assert share(with_context) < share(without)


def test_a_german_answer_still_meets_a_german_target() -> None:
    target = Target(
        "tgt-greedy-choice",
        "Gierige Auswahl des nächsten nicht abgeschlossenen Knotens",
        "Der Algorithmus schließt wiederholt den unbesuchten Knoten mit der kleinsten "
        "vorläufigen Distanz ab und relaxiert dessen ausgehende Kanten.",
    )
    said = (
        "Der Algorithmus schließt wiederholt den unbesuchten Knoten mit der kleinsten "
        "vorläufigen Distanz ab und relaxiert dann dessen ausgehende Kanten."
    )
    assert match_targets(said, [target], language="de")
    assert not match_targets("Mehr weiß ich dazu nicht.", [target], language="de")


def test_a_quantity_on_an_edge_is_its_weight() -> None:
    """Issue #31 (found by tests/browser/test_paraphrased_answers.py): an edge *labelled* with
    its travel time, or storing *how many minutes* it takes, is a weighted edge; naming the
    vertices and edges alone is not the weighted graph."""
    bare = "the shops and the depot are nodes and the roads are edges"
    assert not match_targets(bare, [MODEL, CHOOSE], context=DELIVERY)
    for said in (
        "depot and each shop become nodes and each road is an edge labelled with its travel time",
        "the shops and depot are nodes, the roads are edges, and every edge stores how many "
        "minutes it takes",
        "id treat the depot and each of the 30 shops as nodes and the roads between them as "
        "edges, and put the number of minutes to drive each road on the edge",
    ):
        found = match_targets(said, [MODEL, CHOOSE], context=DELIVERY)
        assert [target.id for target, _ in found] == [MODEL.id], said
    lex = lexicon("en")
    assert "weight" in read("an edge labelled with its latency", lex).concepts
    minutes = read("every edge stores how many minutes it takes", lex)
    assert "weight" in minutes.implied and "weight" not in minutes.concepts
    # Implied, a weight is no shown concept: minutes alone do not model anything.
    assert not match_targets("the roads take a few minutes, the shops are busy", [MODEL])
