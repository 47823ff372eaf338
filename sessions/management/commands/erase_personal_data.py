"""``manage.py erase_personal_data``: pseudonymise personal data (docs/privacy.md).

* ``--candidate USERNAME_OR_EMAIL``: every session of one candidate, and their account (on
  request; ``--reason`` is required).
* ``--expired``: every session over for more than ``VIVA_RETENTION_DAYS`` days.
* ``--complete``: every session erased before erasure covered every table and event field
  (issue #32, ``sessions.erasure.COVERAGE``): what the earlier erasure left is erased now.

A dry run by default: it prints what it would do, session by session, and changes nothing.
``--apply`` erases. Exit status 1 when a session named cannot be erased (``--candidate``: then
nothing of the candidate is erased).
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from accounts.models import User
from sessions.erasure import (
    ErasureRefused,
    erase_candidate,
    erase_session,
    erasure_complete,
    erasure_plan_complete,
    expired_sessions,
    incomplete_erasures,
    session_plan,
)
from sessions.models import ExamSession, PersonalDataErasure


class Command(BaseCommand):
    help = "Pseudonymise a candidate's or expired sessions' personal data (dry run unless --apply)."

    def add_arguments(self, parser: CommandParser) -> None:
        which = parser.add_mutually_exclusive_group(required=True)
        which.add_argument("--candidate", help="the candidate's username or email")
        which.add_argument(
            "--expired", action="store_true", help="sessions past VIVA_RETENTION_DAYS"
        )
        which.add_argument(
            "--complete",
            action="store_true",
            help="complete erasures made before every table and event field was covered",
        )
        parser.add_argument("--reason", default="", help="why (required with --candidate)")
        parser.add_argument("--by", default="", help="username of the staff member who asked")
        parser.add_argument("--apply", action="store_true", help="erase (default: dry run)")

    def handle(self, *args: Any, **options: Any) -> None:  # Any: BaseCommand.handle's type
        requested_by = self._staff(options["by"])
        reason, apply = str(options["reason"]), bool(options["apply"])
        if options["candidate"]:
            self._candidate(options["candidate"], reason, apply, requested_by)
        elif options["complete"]:
            self._complete(reason, apply, requested_by)
        else:
            self._expired(reason, apply, requested_by)

    def _staff(self, username: str) -> User | None:
        if not username:
            return None
        user = User.objects.filter(username=username).exclude(role="candidate").first()
        if user is None:
            raise CommandError(f"--by: no staff member {username!r}")
        return user

    def _describe(self, session: ExamSession) -> bool:
        try:
            plan = session_plan(session)
        except ErasureRefused as exc:
            self.stderr.write(f"cannot erase: {exc}")
            return False
        self.stdout.write(
            f"session {plan.session_id}: {plan.events} event(s), {plan.fields} personal "
            f"field(s), {plan.inputs} typed input(s), {plan.proctor_requests} proctor note(s)"
        )
        return True

    def _candidate(self, who: str, reason: str, apply: bool, by: User | None) -> None:
        candidate = User.objects.filter(Q(username=who) | Q(email__iexact=who), role="candidate")
        found = list(candidate[:2])
        if len(found) != 1:
            raise CommandError(
                f"--candidate: {'no' if not found else 'more than one'} candidate {who!r}"
            )
        if not reason.strip():
            raise CommandError("--candidate needs --reason (why the candidate's data is erased)")
        user = found[0]
        sessions = ExamSession.objects.filter(candidate=user, is_preview=False, erased_at=None)
        fine = all([self._describe(s) for s in sessions.order_by("created_at")])
        self.stdout.write(f"account {user.username}: name, email and username pseudonymised")
        if not fine:
            raise CommandError("nothing erased: a session above cannot be erased", returncode=1)
        if not apply:
            self.stdout.write("dry run: nothing changed (add --apply to erase)")
            return
        done = erase_candidate(candidate=user, requested_by=by, reason=reason)
        self.stdout.write(f"erased {len(done)} session(s) and the account")

    def _expired(self, reason: str, apply: bool, by: User | None) -> None:
        reason = reason.strip() or "retention period (VIVA_RETENTION_DAYS) over"
        erased = refused = 0
        for session in expired_sessions():
            if not self._describe(session):
                refused += 1
                continue
            if apply:
                erase_session(
                    session=session,
                    kind=PersonalDataErasure.Kind.RETENTION,
                    requested_by=by,
                    reason=reason,
                )
                erased += 1
        if not apply:
            self.stdout.write("dry run: nothing changed (add --apply to erase)")
        else:
            self.stdout.write(f"erased {erased} session(s)")
        if refused:
            raise CommandError(f"{refused} expired session(s) cannot be erased", returncode=1)

    def _complete(self, reason: str, apply: bool, by: User | None) -> None:
        reason = reason.strip() or "erasure extended to every table and event field (issue #32)"
        pending = incomplete_erasures()
        for session in pending:
            plan = erasure_plan_complete(session)
            self.stdout.write(
                f"session {plan.session_id} (erased {session.erased_at:%F}): {plan.events} "
                f"more event(s), {plan.fields} personal field(s); every row beside the log"
            )
            if apply:
                erasure_complete(session=session, requested_by=by, reason=reason)
        if not apply:
            self.stdout.write("dry run: nothing changed (add --apply to complete)")
        else:
            self.stdout.write(f"completed {len(pending)} erasure(s)")
