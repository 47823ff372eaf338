"""Typed projections of a session's log for its readers (issue #36): each folds the events of
one audience's view through the payload models (``ioa.events.payloads``), the way
``ioa.runtime.evolve`` and ``ioa.marking.log`` do, so a new event field is read in one place and
checked by mypy.

* :mod:`ioa.projections.session_view` — one session as the proctor's overview sees it (status,
  clocks, counts, alerts).
* :mod:`ioa.projections.session_detail` — the proctor's session page: transcript, evidence
  ledger, interceptions.
"""
