"""LTI's part of a personal-data erasure (docs/privacy.md), run inside the erasure's
transaction (``sessions.signals.personal_data_erased``, connected in ``LtiConfig.ready()``).

A session's grade passbacks keep what was sent where and when (cycle, score, status, attempts);
the texts become the marker: the LMS's answer (``detail``: a refusal can name the learner) and
the comment sent with the grade (the released feedback about the candidate's answers). The
platform's own record of the person (``lti_tool.LtiUser``: name, email, picture) is cleared with
the account (``sessions.erasure.account_pseudonymise``); its opaque ``sub`` stays so a later
launch is still recognised."""

from __future__ import annotations

import uuid

from ioa.events.personal import ERASED_TEXT
from lti.models import GradePassback
from sessions import signals


def on_personal_data_erased(*, session_id: uuid.UUID, **_: object) -> None:
    """Replace the texts of the session's grade passbacks by the marker."""
    rows = GradePassback.objects.filter(session_id=session_id)
    rows.exclude(detail="").update(detail=ERASED_TEXT)
    rows.exclude(comment="").update(comment=ERASED_TEXT)


def connect() -> None:
    """Subscribe (idempotent: the dispatch uid keeps one connection)."""
    signals.personal_data_erased.connect(
        on_personal_data_erased, dispatch_uid="lti.personal_data_erased"
    )
