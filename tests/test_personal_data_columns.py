"""Every stored column is classified for personal-data erasure (issue #32, docs/privacy.md).

Each column of each model (``django.apps.get_models()``, the auto-created many-to-many tables
too) that can hold text (char, text, email, URL, IP address, JSON) is either in
:data:`ERASED`, "may hold the person's data or words: erasure handles it" (with the function
that does), or in :data:`KEPT`, "never holds them" (with why). Columns of other types (numbers,
times, flags, keys) hold no words: :data:`WORDLESS_TYPES` says why per type; a column of a type
in neither fails. So a new column, or a new model, fails here until someone decides what an
erasure does with it. The same holds one level down, for the free-text fields of stored event
payloads (``ioa.events.personal``): sealed or hashed in clear, every one is erased or listed
as the runtime's own words.

The end-to-end proof that the handlers do their work is
``tests/marking/test_erasure_everywhere.py`` (a real exam, erased, the whole database searched).
"""

from __future__ import annotations

import importlib
from typing import Any

import pytest
from django.apps import apps
from django.db import models

from ioa.events.personal import CLEAR_PERSONAL_FIELDS, PERSONAL_FIELDS
from ioa.events.registry import REGISTRY
from sessions import signals

SESSION = "sessions.erasure.erase_session"
ACCOUNT = "sessions.erasure.account_pseudonymise"
MARKING = "marking.erasure.on_personal_data_erased"

ERASED: dict[str, str] = {
    # The admin's log: object names and change messages that name the person or quote a
    # session's texts (a window override's name quotes its reason).
    "admin.LogEntry.object_repr": f"{ACCOUNT}, {SESSION}",
    "admin.LogEntry.change_message": f"{ACCOUNT}, {SESSION}",
    # Signed-in sessions: their data names the account (and what was kept in the session).
    "sessions.Session.session_data": ACCOUNT,
    # The account.
    "accounts.User.password": ACCOUNT,
    "accounts.User.username": ACCOUNT,
    "accounts.User.first_name": ACCOUNT,
    "accounts.User.last_name": ACCOUNT,
    "accounts.User.email": ACCOUNT,
    "accounts.User.display_name": ACCOUNT,
    "accounts.Invitation.used_from": ACCOUNT,
    "accounts.Invitation.next_path": ACCOUNT,
    "accounts.Invitation.note": ACCOUNT,
    "accounts.ApiToken.name": ACCOUNT,  # the person's tokens are deleted
    "accounts.ApiToken.prefix": ACCOUNT,
    "accounts.ApiToken.key_hash": ACCOUNT,
    # The session's record.
    "exam_sessions.WindowOverride.reason": SESSION,
    "exam_sessions.SessionEvent.payload": SESSION,  # ioa.events.personal: every personal field
    "exam_sessions.ProcessedCommand.reason": SESSION,
    "exam_sessions.ProctorActionRequest.params": SESSION,  # an instruction's text
    "exam_sessions.ProctorActionRequest.reason": SESSION,
    "exam_sessions.ProctorActionRequest.message": SESSION,
    "exam_sessions.CandidateInput.payload": SESSION,
    "exam_sessions.CandidateMaterial.original": SESSION,  # the uploaded file: emptied
    "exam_sessions.CandidateMaterial.text": SESSION,  # the text read from it: emptied
    "exam_sessions.CandidateMaterial.filename": SESSION,  # a file name may name the person
    # The bot.
    "bot.BotLease.last_error": "bot.erasure.on_personal_data_erased",
    # Marking.
    "marking.MarkingRequest.error": MARKING,
    "marking.SessionMark.result_json": MARKING,
    "marking.TargetDecision.rationale": MARKING,
    "marking.TargetDecision.evidence": MARKING,
    "marking.SecondMark.rationale": MARKING,
    "marking.PanelRun.result_json": MARKING,
    "marking.Appeal.reason": MARKING,
    "marking.Appeal.outcome": MARKING,
    "marking.MarkingAuditEntry.reason": MARKING,
    "marking.MarkingAuditEntry.details": MARKING,
    "marking.PostMarkingIrregularity.reason": MARKING,
    "marking.PostMarkingIrregularity.report": MARKING,
    # LTI: the platform's record of the person, and what an LMS answered or was sent.
    "lti_tool.LtiUser.given_name": ACCOUNT,
    "lti_tool.LtiUser.family_name": ACCOUNT,
    "lti_tool.LtiUser.name": ACCOUNT,
    "lti_tool.LtiUser.email": ACCOUNT,
    "lti_tool.LtiUser.picture_url": ACCOUNT,
    "lti.GradePassback.detail": "lti.erasure.on_personal_data_erased",
    "lti.GradePassback.comment": "lti.erasure.on_personal_data_erased",
    # Webhooks: what an integrator answered to a delivery about the session.
    "webhooks.WebhookAttempt.response_excerpt": "webhooks.erasure.on_personal_data_erased",
}
"""Columns that may hold the person's data or words → the function of the erasure that
replaces them (by the marker, empty values, or by deleting the row)."""

STAFF_CONFIG = "configuration written by staff or an integrator, about no candidate"
PACKAGE = "the exam package (authored by staff) or what is compiled or reported from it"
ENUM = "an enumerated value the code chooses"
ID = "an identifier, key, nonce or digest the code generates or a platform assigns"
PLATFORM = "an LTI platform's, course's or link's own data (no learner's)"

KEPT: dict[str, str] = {
    "admin.LogEntry.object_id": ID,
    "auth.Permission.name": "Django's permission names",
    "auth.Permission.codename": "Django's permission names",
    "auth.Group.name": STAFF_CONFIG,
    "contenttypes.ContentType.app_label": "model names",
    "contenttypes.ContentType.model": "model names",
    "sessions.Session.session_key": ID,
    "accounts.User.role": ENUM,
    "authoring.DraftPackage.title": PACKAGE,
    "authoring.DraftPackage.document_text": PACKAGE,
    "authoring.DraftPackage.last_report": PACKAGE,
    "authoring.QuestionBankEntry.title": PACKAGE,
    "authoring.QuestionBankEntry.tag_index": PACKAGE,
    "authoring.QuestionBankEntry.language": PACKAGE,
    "authoring.QuestionBankEntry.node_text": PACKAGE,
    "authoring.QuestionBankEntry.learning_outcomes": PACKAGE,
    "authoring.QuestionBankEntry.source_package_id": PACKAGE,
    "authoring.QuestionBankEntry.source_package_title": PACKAGE,
    "authoring.QuestionBankEntry.source_node_id": PACKAGE,
    "authoring.ReviewComment.node_id": PACKAGE,
    "authoring.ReviewComment.text": PACKAGE,
    "publishing.PublishedVersion.package_id": PACKAGE,
    "publishing.PublishedVersion.title": PACKAGE,
    "publishing.PublishedVersion.ir_version": PACKAGE,
    "publishing.PublishedVersion.adapter_version": PACKAGE,
    "publishing.PublishedVersion.canonical_json": PACKAGE,
    "publishing.PublishedVersion.checksum": PACKAGE,
    "publishing.PublishedVersion.compiled_json": PACKAGE,
    "publishing.PublishedVersion.validation_report": PACKAGE,
    "publishing.PublishedVersion.dry_run_report": "the dry run of simulated candidates",
    "exam_sessions.Sitting.title": STAFF_CONFIG,
    "exam_sessions.ExamSession.state": ENUM,
    "exam_sessions.ExamSession.head_hash": ID,
    "exam_sessions.ExamSession.prev_head_hash": ID,
    "exam_sessions.ExamSession.consent_version": "the version of the consent text shown",
    "exam_sessions.ExamSession.exam_mode": ENUM,
    "exam_sessions.SessionEvent.type": ENUM,
    "exam_sessions.SessionEvent.source": ENUM,
    "exam_sessions.SessionEvent.correlation_id": ID,
    "exam_sessions.SessionEvent.schema_version": ENUM,
    "exam_sessions.SessionEvent.hash": ID,
    "exam_sessions.SessionEvent.prev_hash": ID,
    "exam_sessions.SessionEvent.erased": (
        "the erasure's mark: its id, keyed seals (not invertible without VIVA_CHAIN_KEY, kept "
        "out of the database) and digests"
    ),
    "exam_sessions.ProcessedCommand.command_id": ID,
    "exam_sessions.ProcessedCommand.command_type": ENUM,
    "exam_sessions.ProcessedCommand.outcome": ENUM,
    "exam_sessions.ProcessedCommand.event_ids": ID,
    "exam_sessions.ProctorActionRequest.action": ENUM,
    "exam_sessions.ProctorActionRequest.idempotency_key": ID,
    "exam_sessions.ProctorActionRequest.status": ENUM,
    "exam_sessions.ProctorActionRequest.code": ENUM,
    "exam_sessions.ProctorActionRequest.event_ids": ID,
    "exam_sessions.CandidateInput.input_id": ID,
    "exam_sessions.CandidateMaterial.kind": ENUM,
    "exam_sessions.CandidateMaterial.file_type": ENUM,
    "exam_sessions.CandidateMaterial.source": ENUM,
    "exam_sessions.CandidateMaterial.sha256": ID,
    "exam_sessions.CandidateMaterial.text_sha256": ID,
    "exam_sessions.CandidateInput.kind": ENUM,
    "exam_sessions.PersonalDataErasure.kind": ENUM,
    "exam_sessions.PersonalDataErasure.reason": (
        "the accountable record of the erasure itself (the legal ground staff give, e.g. "
        "'GDPR art. 17 request, ticket 4711'); docs/privacy.md asks for no name or words in it"
    ),
    "exam_sessions.PersonalDataErasure.counts": "numbers of events and fields erased",
    # The outbox (sessions.outbox): what a fact's consequence needs to be carried out, by id.
    "exam_sessions.OutboxMessage.topic": ENUM,
    "exam_sessions.OutboxMessage.key": ID,
    "exam_sessions.OutboxMessage.payload": (
        "ids, times and enumerated fields (marking's and grade posts' session, mark and event "
        "ids; a webhook's data, which names objects and enums only: docs/webhooks.md)"
    ),
    "exam_sessions.OutboxMessage.status": ENUM,
    "exam_sessions.OutboxMessage.last_error": (
        "a handler's exception: its type and message, naming ids, topics and transport errors"
    ),
    "bot.BotLease.state": ENUM,
    "bot.BotLease.holder": "the worker process holding the lease (host and pid)",
    "bot.BotLease.runner": ENUM,
    "bot.BotLease.provider": ENUM,
    "bot.BotUsage.currency": ENUM,
    "bot.BotUsage.breakdown": "provider usage: tokens, seconds, characters and prices",
    "bot.BotUsage.unpriced": "provider usage without a price: names and numbers",
    "marking.MarkingScheme.compiler_version": PACKAGE,
    "marking.MarkingScheme.config_json": PACKAGE,
    "marking.MarkingScheme.checksum": PACKAGE,
    "marking.MarkingRequest.status": ENUM,
    "marking.SessionMark.result_checksum": ID,
    "marking.SessionMark.state": ENUM,
    "marking.TargetDecision.target_key": PACKAGE,
    "marking.PracticeFeedback.targets": (
        "a practice attempt's level per target with the package's target labels and keys "
        "(an enumerated level; never the candidate's words)"
    ),
    "marking.TargetDecision.level": ENUM,
    "marking.TargetDecision.source": ENUM,
    "marking.SecondMark.target_key": PACKAGE,
    "marking.SecondMark.level": ENUM,
    "marking.PanelRun.status": ENUM,
    "marking.PanelRun.notice": "the machine's own notice (the panel skipped offline)",
    "marking.PanelRun.routed": PACKAGE,
    "marking.ResultRelease.feedback": ENUM,
    "marking.MarkingAuditEntry.action": ENUM,
    "marking.PostMarkingIrregularity.event_id": ID,
    "marking.PostMarkingIrregularity.category": ENUM,
    "marking.PostMarkingIrregularity.actor": "the proctor's id (user:<pk>), staff",
    "marking.PostMarkingIrregularity.node_id": PACKAGE,
    "lti_tool.Key.public_key": STAFF_CONFIG,
    "lti_tool.Key.private_key": STAFF_CONFIG,
    "lti_tool.LtiRegistration.name": STAFF_CONFIG,
    "lti_tool.LtiRegistration.issuer": STAFF_CONFIG,
    "lti_tool.LtiRegistration.client_id": STAFF_CONFIG,
    "lti_tool.LtiRegistration.audience": STAFF_CONFIG,
    "lti_tool.LtiRegistration.auth_url": STAFF_CONFIG,
    "lti_tool.LtiRegistration.token_url": STAFF_CONFIG,
    "lti_tool.LtiRegistration.keyset_url": STAFF_CONFIG,
    "lti_tool.LtiRegistration.public_key": STAFF_CONFIG,
    "lti_tool.LtiRegistration.private_key": STAFF_CONFIG,
    "lti_tool.LtiPlatformInstance.issuer": PLATFORM,
    "lti_tool.LtiPlatformInstance.guid": PLATFORM,
    "lti_tool.LtiPlatformInstance.lti1p1_id_on_platform": PLATFORM,
    "lti_tool.LtiPlatformInstance.contact_email": PLATFORM + " (its administrator's address)",
    "lti_tool.LtiPlatformInstance.description": PLATFORM,
    "lti_tool.LtiPlatformInstance.name": PLATFORM,
    "lti_tool.LtiPlatformInstance.url": PLATFORM,
    "lti_tool.LtiPlatformInstance.product_family_code": PLATFORM,
    "lti_tool.LtiPlatformInstance.version": PLATFORM,
    "lti_tool.LtiDeployment.deployment_id": PLATFORM,
    "lti_tool.LtiDeployment.pns_url": PLATFORM,
    "lti_tool.LtiUser.sub": (
        "the platform's opaque id of the learner, kept so a later launch finds the pseudonymised "
        "account (no name, email or words)"
    ),
    "lti_tool.LtiUser.lti1p1_id_on_platform": "as sub: the platform's opaque legacy id",
    "lti_tool.LtiContext.id_on_platform": PLATFORM,
    "lti_tool.LtiContext.lti1p1_id_on_platform": PLATFORM,
    "lti_tool.LtiContext.label": PLATFORM,
    "lti_tool.LtiContext.title": PLATFORM,
    "lti_tool.LtiContext.memberships_url": PLATFORM,
    "lti_tool.LtiContext.lineitems_url": PLATFORM,
    "lti_tool.LtiResourceLink.id_on_platform": PLATFORM,
    "lti_tool.LtiResourceLink.lti1p1_id_on_platform": PLATFORM,
    "lti_tool.LtiResourceLink.title": PLATFORM,
    "lti_tool.LtiResourceLink.description": PLATFORM,
    "lti_tool.LtiLineItem.url": PLATFORM,
    "lti_tool.LtiLineItem.label": PLATFORM,
    "lti_tool.LtiLineItem.tag": PLATFORM,
    "lti_tool.LtiLineItem.resource_id": PLATFORM,
    "lti.Placement.how": ENUM,
    "lti.SittingLink.ags_lineitems": PLATFORM,
    "lti.SittingLink.ags_lineitem": PLATFORM,
    "lti.SittingLink.ags_scopes": PLATFORM,
    "lti.SittingLink.nrps_memberships": PLATFORM,
    "lti.LaunchAccount.role": ENUM,
    "lti.UsedNonce.nonce": ID,
    "lti.GradePassback.kind": ENUM,
    "lti.GradePassback.status": ENUM,
    "webhooks.WebhookEndpoint.name": STAFF_CONFIG,
    "webhooks.WebhookEndpoint.url": STAFF_CONFIG,
    "webhooks.WebhookEndpoint.secret": STAFF_CONFIG,
    "webhooks.WebhookEndpoint.events": STAFF_CONFIG,
    "webhooks.WebhookDelivery.id": ID,
    "webhooks.WebhookDelivery.event": ENUM,
    "webhooks.WebhookDelivery.event_key": ID,
    "webhooks.WebhookDelivery.body": (
        "ids and enumerated facts only (webhooks.receivers: session, sitting, event and mark "
        "ids, seq, the completion reason, an irregularity's category, a cycle): the signed "
        "bytes that were sent, naming no person"
    ),
    "webhooks.WebhookDelivery.status": ENUM,
    "webhooks.WebhookAttempt.error": "our transport error (connection refused, timeout, TLS)",
}
"""Columns that never hold the person's data or words → why."""

WORDLESS_TYPES: dict[type[models.Field[Any, Any]], str] = {
    models.AutoField: "row numbers",
    models.BigAutoField: "row numbers",
    models.SmallAutoField: "row numbers",
    models.BooleanField: "flags",
    models.IntegerField: "numbers (counts, scores, seqs, cycles, status codes)",
    models.BigIntegerField: "numbers",
    models.SmallIntegerField: "numbers",
    models.PositiveIntegerField: "numbers",
    models.PositiveBigIntegerField: "numbers",
    models.PositiveSmallIntegerField: "numbers",
    models.FloatField: "numbers (scores, confidences)",
    models.DecimalField: "numbers (scores, prices)",
    models.DateTimeField: "times (when, not what)",
    models.DateField: "dates",
    models.DurationField: "durations",
    models.UUIDField: "generated ids",
    models.ForeignKey: (
        "links between rows: an erased session stays the pseudonymised account's (its name, "
        "email and sign-in are erased), so marks and audit stay accountable"
    ),
    models.OneToOneField: "links between rows (as ForeignKey)",
}
"""Column types that cannot hold words → why (exact types: a subclass must be listed)."""

TEXT_TYPES = (
    models.CharField,  # EmailField, URLField, SlugField... are CharFields
    models.TextField,
    models.JSONField,
    models.GenericIPAddressField,
    models.BinaryField,
    models.FileField,
)

RUNTIME_WORDS = "the runtime's own words (composed by code from ids and rules, no quoted text)"

KEPT_EVENT_FIELDS: dict[str, str] = {
    "transcript_final.language": "the language tag the recogniser reported",
    "candidate_command_received.rejectionReason": RUNTIME_WORDS,
    "transition_decision.conditionEvaluated": "the package's transition condition",
    "transition_held.reason": RUNTIME_WORDS,
    "guardrail_triggered.description": RUNTIME_WORDS,
    "recovery_started.triggerDescription": RUNTIME_WORDS + " (ioa.runtime.repetition)",
    "exam_state_changed.reason": RUNTIME_WORDS,
}
"""Free-text fields of stored event payloads that are not the person's words → why."""


def columns() -> list[tuple[str, models.Field[Any, Any]]]:
    found = []
    for model in apps.get_models(include_auto_created=True):
        for field in model._meta.concrete_fields:
            found.append((f"{model._meta.label}.{field.name}", field))
    return found


def test_every_column_that_can_hold_text_is_classified_for_erasure() -> None:
    unclassified = [
        f"{name} ({type(field).__name__})"
        for name, field in columns()
        if isinstance(field, TEXT_TYPES) and name not in ERASED and name not in KEPT
    ]
    assert unclassified == [], (
        "classify each new column in tests/test_personal_data_columns.py: ERASED (and erase it "
        "in the erasure: sessions.erasure, or a personal_data_erased receiver) or KEPT (why):\n"
        + "\n".join(unclassified)
    )


def test_every_other_column_is_of_a_type_that_holds_no_words() -> None:
    unknown = [
        f"{name} ({type(field).__name__})"
        for name, field in columns()
        if not isinstance(field, TEXT_TYPES) and type(field) not in WORDLESS_TYPES
    ]
    assert unknown == [], "a column type neither text nor wordless:\n" + "\n".join(unknown)


def test_the_lists_are_disjoint_and_name_existing_text_columns() -> None:
    text_columns = {name for name, field in columns() if isinstance(field, TEXT_TYPES)}
    assert set(ERASED) & set(KEPT) == set()
    stale = sorted((set(ERASED) | set(KEPT)) - text_columns)
    assert stale == [], f"listed but no such text column (renamed or removed?): {stale}"


@pytest.mark.parametrize("path", sorted({p for v in ERASED.values() for p in v.split(", ")}))
def test_each_named_handler_exists(path: str) -> None:
    module, name = path.rsplit(".", 1)
    assert callable(getattr(importlib.import_module(module), name))


def test_every_receiver_of_the_erasure_is_connected() -> None:
    """The apps above sessions erase their copies from ``personal_data_erased``: each one named
    above must be listening (an app's ``ready()`` that lost its ``connect()`` fails here)."""
    uids = {key[0] for key, *_ in signals.personal_data_erased.receivers}
    receivers = {p.split(".")[0] for v in ERASED.values() for p in v.split(", ")} - {"sessions"}
    assert {f"{app}.personal_data_erased" for app in receivers} <= uids, uids


def _free_fields(schema: dict[str, Any], defs: dict[str, Any], path: str) -> list[str]:
    """The fields of a payload's JSON schema that can hold free text: strings longer than an
    id (over 200 characters, no enum or const) and objects of any keys."""
    if "$ref" in schema:
        return _free_fields(defs[schema["$ref"].split("/")[-1]], defs, path)
    if "anyOf" in schema:
        return sorted({f for branch in schema["anyOf"] for f in _free_fields(branch, defs, path)})
    if "const" in schema or "enum" in schema:
        return []
    kind = schema.get("type")
    if kind == "string":
        return [path] if schema.get("maxLength", 10**9) > 200 else []
    if kind == "array":
        return _free_fields(schema.get("items", {}), defs, path)
    if kind == "object" and "properties" in schema:
        return [
            found
            for name, sub in schema["properties"].items()
            for found in _free_fields(sub, defs, f"{path}.{name}")
        ]
    return [path] if kind == "object" else []


def test_every_free_text_field_of_a_stored_event_is_erased_or_the_runtimes_own() -> None:
    personal = {
        f"{kind}.{name}"
        for fields in (PERSONAL_FIELDS, CLEAR_PERSONAL_FIELDS)
        for kind, names in fields.items()
        for name in names
    }
    free = []
    for event_type, spec in REGISTRY.items():
        if not spec.persisted:
            continue
        schema = spec.payload_model.model_json_schema()
        for name, sub in schema["properties"].items():
            free += _free_fields(sub, schema.get("$defs", {}), f"{event_type.value}.{name}")
    unclassified = sorted(set(free) - personal - set(KEPT_EVENT_FIELDS))
    assert unclassified == [], (
        "a stored event field that can hold free text: add it to ioa.events.personal "
        "(CLEAR_PERSONAL_FIELDS) or to KEPT_EVENT_FIELDS with why: " + ", ".join(unclassified)
    )
    assert sorted((personal | set(KEPT_EVENT_FIELDS)) - set(free)) == []
