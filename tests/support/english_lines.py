"""The fixed English lines an exam can speak, for tests that an exam in another language never
speaks one (the runtime's texts and the offline examiner's lines)."""

from __future__ import annotations

import dataclasses

from bot.offline_examiner import LINES
from ioa.runtime import texts


def english_lines() -> frozenset[str]:
    """Every non-empty line the runtime and the offline examiner would say in an English exam."""
    lines = set(texts.ENGLISH.spoken().values())
    lines.update(str(line) for line in dataclasses.asdict(LINES["en"]).values())
    return frozenset(line for line in lines if line)
