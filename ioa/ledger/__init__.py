"""The evidence ledger (our 06 chapter, ``docs/spec/evidence-ledger.md``): pure, deterministic.

* :func:`decide_signal` validates one proposed signal against the node's evidence targets
  (EVD-008/009), links it to transcript turns, applies EVD-010 and merges duplicates;
* :class:`EvidenceLedger` holds the accepted entries and answers coverage questions;
* :class:`LedgerEntry` is exactly an ``evidence_signal`` payload, so the ledger replays.
"""

from ioa.ledger.decisions import (
    RULE_OF,
    STT_MIN_CONFIDENCE,
    Duplicate,
    Recorded,
    Rejected,
    RejectionCode,
    SignalDecision,
    decide_signal,
    default_dimension,
    describe,
)
from ioa.ledger.ledger import EvidenceLedger
from ioa.ledger.linking import link_turns
from ioa.ledger.model import (
    COVERING_KINDS,
    LedgerEntry,
    SttSummary,
    TargetInfo,
    TurnInfo,
)
from ioa.ledger.proposals import EXCERPT_MAX_CHARS, SignalProposal

__all__ = [
    "COVERING_KINDS",
    "EXCERPT_MAX_CHARS",
    "RULE_OF",
    "STT_MIN_CONFIDENCE",
    "Duplicate",
    "EvidenceLedger",
    "LedgerEntry",
    "Recorded",
    "Rejected",
    "RejectionCode",
    "SignalDecision",
    "SignalProposal",
    "SttSummary",
    "TargetInfo",
    "TurnInfo",
    "decide_signal",
    "default_dimension",
    "describe",
    "link_turns",
]
