"""Marking: from the evidence ledger to moderated, explainable marks."""
