"""The publication gate: validate + compile + store, atomically.

A package with any error is rejected and nothing is stored. A package identical to the draft's
latest version (same checksum) is not stored twice: publishing is idempotent.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext

from accounts.models import User
from authoring.models import DraftPackage
from authoring.selectors import review_state
from authoring.services import DraftConflict
from ioa.canonical import canonical_json, checksum
from ioa.compiler import compile_package, serialise_compiled_flow
from ioa.dry_run import REPORT_VERSION, dry_run
from ioa.schema import AssessmentPackage, load_package
from ioa.validation import validate_package
from publishing.models import PublishedVersion

logger = logging.getLogger(__name__)


class PublishRejected(Exception):
    """The package did not pass the gate; ``report`` is the full validation report."""

    def __init__(self, report: dict[str, object]) -> None:
        listed = report.get("errors")
        errors = listed if isinstance(listed, list) else []
        message = errors[0].get("message") if errors and isinstance(errors[0], dict) else None
        first = "see the report" if message is None else message
        super().__init__(f"publication rejected with {len(errors)} error(s): {first}")
        self.report = report


def _dry_run_or_failure(package: AssessmentPackage) -> dict[str, object]:
    """The dry run stored with the version. The package passed the gate, so a failure of the
    simulation never blocks publishing: it is logged and stored as ``{"error": ...}`` (the
    publish and versions pages say the dry run failed)."""
    try:
        return dry_run(package)
    except Exception as exc:
        logger.exception("the dry run of package %s failed", package.metadata.packageId)
        return {"reportVersion": REPORT_VERSION, "error": f"{type(exc).__name__}: {exc}"[:500]}


class PublishNeedsReview(Exception):
    """The owner requires an approval and the review is not complete; ``missing`` names what
    is missing (docs/studio.md, "Review before publish")."""

    def __init__(self, missing: list[str]) -> None:
        super().__init__(
            gettext("Not published: this package needs %(missing)s.")
            % {"missing": gettext("; and ").join(missing)}
        )
        self.missing = missing


@dataclass(frozen=True)
class PublishOutcome:
    version: PublishedVersion
    created: bool  # False when the draft was unchanged since its latest version


def version_publish(
    *, draft: DraftPackage, user: User, expected_revision: int | None = None
) -> PublishOutcome:
    """Publishes the draft's current document as a new immutable version.

    Raises PublishRejected (after keeping the fresh report on the draft) when the gate refuses,
    PublishNeedsReview when the owner requires an approval and the review is incomplete, and
    authoring.services.DraftConflict when the draft moved past ``expected_revision``.
    """
    outcome = _publish_locked(draft=draft, user=user, expected_revision=expected_revision)
    if isinstance(outcome, PublishRejected):
        raise outcome
    return outcome


@transaction.atomic
def _publish_locked(
    *, draft: DraftPackage, user: User, expected_revision: int | None
) -> PublishOutcome | PublishRejected:
    # Lock order: the draft row, then its versions; two publishes of one draft serialise and
    # get consecutive numbers.
    locked = DraftPackage.objects.select_for_update().get(pk=draft.pk)
    if expected_revision is not None and expected_revision != locked.revision:
        raise DraftConflict(locked.revision)
    missing = review_state(draft=locked).missing_for(user)
    if missing:
        raise PublishNeedsReview(missing)
    now = timezone.now()
    report = validate_package(locked.document, now=now)
    report_dict = report.to_dict()
    locked.last_report = report_dict
    locked.save(update_fields=["last_report"])
    if not report.passed:
        # The refreshed report is kept on the draft; no version is stored.
        return PublishRejected(report_dict)

    text = canonical_json(locked.document)
    digest = checksum(locked.document)
    published = locked.versions.filter(is_preview=False)  # preview builds are not versions
    latest = published.order_by("-number").first()
    if latest is not None and latest.checksum == digest:
        return PublishOutcome(version=latest, created=False)

    package = load_package(locked.document)
    compiled = compile_package(package)
    number = (published.aggregate(n=Max("number"))["n"] or 0) + 1
    version = PublishedVersion(
        draft=locked,
        number=number,
        package_id=str(package.metadata.packageId),
        title=package.metadata.title,
        ir_version=package.irVersion,
        adapter_version=compiled["adapterVersion"],
        canonical_json=text,
        checksum=digest,
        compiled_json=serialise_compiled_flow(compiled),
        validation_report=report_dict,
        dry_run_report=_dry_run_or_failure(package),
        published_by=user,
        published_at=now,
    )
    version.save()
    return PublishOutcome(version=version, created=True)
