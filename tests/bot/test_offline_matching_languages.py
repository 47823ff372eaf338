"""The offline examiner's matcher in German and Spanish (issue #31): the labelled sets of the
German and Spanish CS201 packages (``tests/bot/offline_matching/cs201-graph-algorithms.de.*``
and ``.es.*``)."""

from __future__ import annotations

import pytest

from tests.bot.offline_matching import TRANSLATED_PACKAGES, items, language


@pytest.mark.parametrize("package", TRANSLATED_PACKAGES)
def test_every_target_has_enough_labelled_answers(package: str) -> None:
    assert language(package) in {"de", "es"}
    for which, least in (("main", 4), ("heldout", 2)):
        counts: dict[tuple[str, bool], int] = {}
        for item in items(package, which):
            key = (item.target, item.covers)
            counts[key] = counts.get(key, 0) + 1
        targets = {target for target, _ in counts}
        assert len(targets) == 7, (package, which, targets)
        for target in targets:
            assert counts.get((target, True), 0) >= least, (package, which, target)
            assert counts.get((target, False), 0) >= least, (package, which, target)
