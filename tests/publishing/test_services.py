"""The publication gate: atomic publish, idempotence, immutability of versions."""

from __future__ import annotations

import json
import threading

import pytest
from django.db import IntegrityError, InternalError, connection, transaction

from authoring.models import DraftPackage
from authoring.services import DraftConflict, draft_save
from ioa.canonical import checksum
from publishing import services
from publishing.models import ImmutableVersionError, PublishedVersion
from publishing.services import PublishRejected, version_publish
from tests.factories import AuthorFactory, DraftPackageFactory, example_document


@pytest.mark.django_db
def test_publish_stores_canonical_json_checksum_compiled_flow_and_report() -> None:
    draft = DraftPackageFactory()
    outcome = version_publish(draft=draft, user=draft.owner)
    v = outcome.version
    assert outcome.created
    assert v.number == 1
    assert json.loads(v.canonical_json) == draft.document
    assert v.checksum == checksum(draft.document)
    assert v.ir_version == "ioa-orm/0.2"
    assert v.adapter_version.startswith("pipecat-adapter/")
    assert json.loads(v.compiled_json)["adapterVersion"] == v.adapter_version
    assert v.validation_report["result"] == "pass"
    assert v.package_id == draft.document["metadata"]["packageId"]


@pytest.mark.django_db
def test_a_rejected_package_stores_no_version_but_keeps_the_report() -> None:
    document = example_document()
    document["initialNodeId"] = "no-such-node"
    draft = DraftPackageFactory(document=document)
    with pytest.raises(PublishRejected) as rejected:
        version_publish(draft=draft, user=draft.owner)
    assert "PKG-002" in {e["ruleId"] for e in rejected.value.report["errors"]}
    assert PublishedVersion.objects.count() == 0
    assert DraftPackage.objects.get(pk=draft.pk).last_report["result"] == "reject"


@pytest.mark.django_db
def test_publishing_is_atomic_when_storing_fails(monkeypatch) -> None:
    draft = DraftPackageFactory()

    def failing_serialiser(flow):
        raise RuntimeError("disk full")

    monkeypatch.setattr(services, "serialise_compiled_flow", failing_serialiser)
    with pytest.raises(RuntimeError):
        version_publish(draft=draft, user=draft.owner)
    assert PublishedVersion.objects.count() == 0
    assert DraftPackage.objects.get(pk=draft.pk).last_report is None


@pytest.mark.django_db
def test_republishing_unchanged_returns_the_latest_and_a_change_makes_a_new_version() -> None:
    draft = DraftPackageFactory()
    first = version_publish(draft=draft, user=draft.owner).version
    again = version_publish(draft=draft, user=draft.owner)
    assert not again.created and again.version.pk == first.pk
    document = example_document()
    document["metadata"]["version"] = "1.1.0"
    draft = draft_save(draft=draft, document=document, expected_revision=draft.revision)
    second = version_publish(draft=draft, user=draft.owner)
    assert second.created and second.version.number == 2
    assert PublishedVersion.objects.get(pk=first.pk).canonical_json == first.canonical_json


@pytest.mark.django_db
def test_a_stale_revision_is_a_conflict() -> None:
    draft = DraftPackageFactory()
    draft_save(draft=draft, document=example_document(), expected_revision=1)
    with pytest.raises(DraftConflict):
        version_publish(draft=draft, user=draft.owner, expected_revision=1)


@pytest.mark.django_db
def test_published_versions_cannot_be_changed_through_the_model_layer() -> None:
    draft = DraftPackageFactory()
    v = version_publish(draft=draft, user=draft.owner).version
    v.title = "changed"
    with pytest.raises(ImmutableVersionError):
        v.save()
    with pytest.raises(ImmutableVersionError):
        v.delete()
    with pytest.raises(ImmutableVersionError):
        PublishedVersion.objects.filter(pk=v.pk).update(title="changed")
    with pytest.raises(ImmutableVersionError):
        PublishedVersion.objects.filter(pk=v.pk).delete()
    stored = PublishedVersion.objects.get(pk=v.pk)
    assert stored.title == draft.document["metadata"]["title"]


@pytest.mark.services("postgres")
@pytest.mark.django_db
def test_published_versions_cannot_be_changed_even_by_raw_sql() -> None:
    draft = DraftPackageFactory()
    v = version_publish(draft=draft, user=draft.owner).version
    for statement in (
        "UPDATE publishing_publishedversion SET canonical_json = '{}' WHERE id = %s",
        "DELETE FROM publishing_publishedversion WHERE id = %s",
    ):
        with (
            pytest.raises((IntegrityError, InternalError)),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement, [v.pk])
    assert PublishedVersion.objects.get(pk=v.pk).checksum == v.checksum


@pytest.mark.services("postgres")
@pytest.mark.django_db(transaction=True)
def test_concurrent_publishes_get_consecutive_numbers() -> None:
    author = AuthorFactory()
    drafts = []
    for n in range(4):
        document = example_document()
        document["metadata"]["version"] = f"1.0.{n}"
        drafts.append(document)
    draft = DraftPackageFactory(owner=author, document=drafts[0])
    barrier = threading.Barrier(3)
    errors: list[BaseException] = []

    def publish_edit(document: dict) -> None:
        try:
            barrier.wait()
            current = draft_save(draft=draft, document=document, expected_revision=None)
            version_publish(draft=current, user=author)
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=publish_edit, args=(d,)) for d in drafts[1:]]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    numbers = sorted(PublishedVersion.objects.filter(draft=draft).values_list("number", flat=True))
    assert numbers == list(range(1, len(numbers) + 1))
    assert len(numbers) >= 1
