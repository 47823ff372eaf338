"""Whether the candidate's latest spoken turn may still go on (issue #30, runtime semantics §18).

A turn whose words are finished ends on the short *reply pause*
(``ioa.runtime.answer_end.reply_wait``) so the examiner answers about a second after the
candidate stops; until the longer finished pause has passed with no more speech it is
*unsettled*: the observation that answers it is ``reopenable`` (a natural completion is held,
not taken), and once the pause has passed :class:`TurnSettlement` says so, and the bot sends
``TurnSettled``. The end-of-turn strategy (``bot.voice.turn_end``) writes it; the observation
handler (``bot.observation_sink``) reads it. No Pipecat here.
"""

from __future__ import annotations

from collections.abc import Callable


class TurnSettlement:
    """See the module docstring."""

    def __init__(self) -> None:
        self.unsettled = False
        """The latest turn ended on the reply pause and has not stayed over yet (speech after
        it keeps it so: the candidate went on, and the controller drops what it held)."""
        self._on_settled: Callable[[], None] | None = None

    def bind(self, on_settled: Callable[[], None]) -> None:
        """``on_settled`` is called when an unsettled turn has stayed over."""
        self._on_settled = on_settled

    def ended_early(self) -> None:
        """A turn ended on the reply pause."""
        self.unsettled = True

    def ended(self) -> None:
        """A turn ended on its full pause (or was typed): nothing to settle."""
        self.unsettled = False

    def settled(self) -> None:
        """The finished pause passed after an early end with no more speech."""
        if not self.unsettled:
            return
        self.unsettled = False
        if self._on_settled is not None:
            self._on_settled()
