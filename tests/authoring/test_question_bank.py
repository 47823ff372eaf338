"""The question bank (issue #34): save a node with its targets, rubric and outcomes; search;
insert into another draft with ids renamed and outcomes mapped, still passing validation;
provenance; other authors' private entries are absent; built-in templates in en/de/es."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client

from authoring import selectors, services
from authoring.bank_insert import NodeNotFound
from authoring.models import DraftPackage, QuestionBankEntry
from authoring.question_templates import TEMPLATE_IDS, question_templates
from ioa.validation import validate_package
from publishing.services import version_publish
from tests.factories import (
    AdminFactory,
    AuthorFactory,
    CandidateFactory,
    DraftPackageFactory,
    ProctorFactory,
    example_document,
)

pytestmark = pytest.mark.django_db


def node_of(document: dict[str, Any], node_id: str) -> dict[str, Any]:
    return next(n for n in document["nodes"] if n["nodeId"] == node_id)


@pytest.fixture
def author() -> Any:
    return AuthorFactory()


@pytest.fixture
def cs201(author: Any) -> DraftPackage:
    draft: DraftPackage = DraftPackageFactory(owner=author, document=example_document())
    return draft


def test_save_keeps_the_node_targets_rubric_outcomes_and_provenance(
    author: Any, cs201: DraftPackage
) -> None:
    version_publish(draft=cs201, user=author)
    entry = services.bank_entry_save(
        owner=author, draft=cs201, node_id="q-dijkstra", tags=["Graphs", " core ", "graphs"]
    )
    entry.refresh_from_db()
    source = node_of(example_document(), "q-dijkstra")
    assert entry.node["evidenceTargets"] == source["evidenceTargets"]
    assert "transitions" not in entry.node
    assert entry.title == "Dijkstra's algorithm"
    assert entry.tags == ["graphs", "core"]
    assert entry.learning_outcomes == [
        {"id": "LO2", "text": "Explain and analyse classic shortest-path algorithms."}
    ]
    assert (entry.source_draft_id, entry.source_revision) == (cs201.pk, cs201.revision)
    assert entry.source_version_number == 1
    assert entry.source_node_id == "q-dijkstra"
    assert entry.source_package_id == example_document()["metadata"]["packageId"]


def test_an_end_node_or_a_missing_node_is_not_saved(author: Any, cs201: DraftPackage) -> None:
    for node_id in ("end-normal", "no-such-node"):
        with pytest.raises(NodeNotFound):
            services.bank_entry_save(owner=author, draft=cs201, node_id=node_id)
    assert not QuestionBankEntry.objects.exists()


def test_search_by_words_and_tag_and_only_what_the_user_may_see(
    author: Any, cs201: DraftPackage
) -> None:
    mine = services.bank_entry_save(owner=author, draft=cs201, node_id="q-dijkstra", tags=["x"])
    other = AuthorFactory()
    theirs_draft = DraftPackageFactory(owner=other, document=example_document())
    private = services.bank_entry_save(owner=other, draft=theirs_draft, node_id="q-dijkstra")
    shared = services.bank_entry_save(
        owner=other, draft=theirs_draft, node_id="scn-delivery-routes", shared=True, tags=["x"]
    )
    assert list(selectors.bank_entry_list(user=author)) == [shared, mine]
    assert list(selectors.bank_entry_list(user=author, query="DIJKSTRA greedy")) == [mine]
    assert list(selectors.bank_entry_list(user=author, tag="X")) == [shared, mine]
    assert list(selectors.bank_entry_list(user=author, query="nothing-like-this")) == []
    with pytest.raises(QuestionBankEntry.DoesNotExist):
        selectors.bank_entry_get(user=author, entry_id=private.pk)
    assert list(selectors.bank_entry_list(user=CandidateFactory())) == []


def test_insert_renames_clashing_ids_and_the_result_passes(
    author: Any, cs201: DraftPackage
) -> None:
    entry = services.bank_entry_save(owner=author, draft=cs201, node_id="q-dijkstra")
    result, report = services.bank_insert_into(
        document=example_document(),
        extracted=selectors.bank_entry_extracted(entry),
        after="q-dijkstra",
    )
    assert report["result"] == "pass", report["errors"]
    assert result.node_id == "q-dijkstra-2"
    assert result.renamed["q-dijkstra"] == "q-dijkstra-2"
    assert result.renamed["tgt-greedy-choice"] == "tgt-greedy-choice-2"
    inserted = node_of(result.document, "q-dijkstra-2")
    assert inserted["completionPolicy"]["requiredEvidenceTargetIds"] == ["tgt-greedy-choice-2"]
    assert [t["id"] for t in inserted["evidenceTargets"]] == [
        "tgt-greedy-choice-2",
        "tgt-complexity-2",
        "tgt-negative-weights-2",
    ]
    # Spliced in: q-dijkstra now leads to the copy, the copy to where q-dijkstra led.
    assert {t["targetNodeId"] for t in node_of(result.document, "q-dijkstra")["transitions"]} == {
        "q-dijkstra-2"
    }
    assert [t["targetNodeId"] for t in inserted["transitions"]] == ["pool-scenario"]


def test_insert_maps_an_outcome_with_the_same_text_and_adds_a_missing_one(
    author: Any, cs201: DraftPackage
) -> None:
    entry = services.bank_entry_save(owner=author, draft=cs201, node_id="q-dijkstra")
    target = example_document("hosp210-hotel-breakfast-scenario")
    target["metadata"]["learningOutcomes"] = [
        {"id": "LO2", "text": "Something else entirely."},
        {"id": "k-1", "text": "explain and analyse  classic shortest-path algorithms."},
    ]
    result, _ = services.bank_insert_into(
        document=target, extracted=selectors.bank_entry_extracted(entry)
    )
    criteria = {
        c
        for t in node_of(result.document, result.node_id)["evidenceTargets"]
        for c in t["markingCriteria"]
    }
    assert criteria == {"k-1"} and result.outcomes_mapped == {"LO2": "k-1"}
    target["metadata"]["learningOutcomes"] = [{"id": "LO2", "text": "Something else entirely."}]
    result, report = services.bank_insert_into(
        document=target, extracted=selectors.bank_entry_extracted(entry)
    )
    assert result.outcomes_added == ["LO2-2"]
    assert result.document["metadata"]["learningOutcomes"][-1] == {
        "id": "LO2-2",
        "text": "Explain and analyse classic shortest-path algorithms.",
    }
    assert report["result"] == "pass", report["errors"]


def test_insert_that_would_add_an_error_is_refused(author: Any, cs201: DraftPackage) -> None:
    entry = services.bank_entry_save(owner=author, draft=cs201, node_id="q-dijkstra")
    extracted = selectors.bank_entry_extracted(entry)
    extracted.node["promptSeed"] = ""
    with pytest.raises(services.InsertRefused) as refused:
        services.bank_insert_into(document=example_document(), extracted=extracted)
    assert refused.value.errors and all(e["nodeId"] == "q-dijkstra-2" for e in refused.value.errors)


@pytest.mark.parametrize("language", ["en", "de", "es"])
def test_every_template_inserts_into_a_passing_package_in_its_language(language: str) -> None:
    templates = question_templates(language)
    assert [t.id for t in templates] == list(TEMPLATE_IDS)
    assert len({t.title for t in templates}) == 4
    document = example_document()
    document["metadata"]["language"] = language
    for template in templates:
        result, report = services.bank_insert_into(
            document=document, extracted=selectors.template_extracted(template)
        )
        assert report["result"] == "pass", report["errors"]
        document = result.document
    assert validate_package(document).to_dict()["result"] == "pass"


def test_a_template_in_an_empty_package_becomes_its_first_question(author: Any) -> None:
    empty = services.empty_document(title="Empty")
    result, report = services.bank_insert_into(
        document=empty, extracted=selectors.template_extracted(question_templates("de")[0])
    )
    assert result.document["initialNodeId"] == "explain-concept"
    assert [n["kind"] for n in result.document["nodes"]] == ["question", "end"]
    assert report["result"] == "pass", report["errors"]


def test_another_authors_private_entry_is_404_and_only_the_owner_deletes(
    author: Any, cs201: DraftPackage
) -> None:
    entry = services.bank_entry_save(owner=author, draft=cs201, node_id="q-dijkstra")
    shared = services.bank_entry_save(
        owner=author, draft=cs201, node_id="scn-delivery-routes", shared=True
    )
    other = Client()
    other.force_login(AuthorFactory())
    assert other.get(f"/api/v1/question-bank/{entry.pk}/").status_code == 404
    assert other.get(f"/api/v1/question-bank/{shared.pk}/").status_code == 200
    assert other.delete(f"/api/v1/question-bank/{shared.pk}/").status_code == 404
    assert QuestionBankEntry.objects.filter(pk=shared.pk).exists()
    mine = Client()
    mine.force_login(author)
    assert mine.delete(f"/api/v1/question-bank/{shared.pk}/").status_code == 204


def test_api_save_search_and_insert_without_saving(author: Any, cs201: DraftPackage) -> None:
    client = Client()
    client.force_login(author)
    saved = client.post(
        "/api/v1/question-bank/",
        {"draftId": str(cs201.pk), "nodeId": "q-dijkstra", "title": "Dijkstra", "tags": ["g"]},
        content_type="application/json",
    )
    assert saved.status_code == 201, saved.content
    body = saved.json()
    assert body["savedFrom"]["nodeId"] == "q-dijkstra" and body["savedFrom"]["revision"] == 1
    found = client.get("/api/v1/question-bank/?q=dijkstra&tag=g").json()
    assert [e["id"] for e in found["results"]] == [body["id"]]
    other = DraftPackageFactory(owner=author, document=example_document())
    inserted = client.post(
        f"/api/v1/packages/{other.pk}/bank-insert/",
        {"entryId": body["id"], "afterNodeId": "q-dijkstra"},
        content_type="application/json",
    )
    assert inserted.status_code == 200, inserted.content
    answer = inserted.json()
    assert answer["nodeId"] == "q-dijkstra-2" and answer["report"]["result"] == "pass"
    assert answer["renamed"]["q-dijkstra"] == "q-dijkstra-2"
    other.refresh_from_db()
    assert other.revision == 1  # nothing saved without a revision


def test_api_insert_refuses_a_stranger_entry_and_a_document_that_is_no_package(
    author: Any, cs201: DraftPackage
) -> None:
    stranger = AuthorFactory()
    theirs = services.bank_entry_save(
        owner=stranger,
        draft=DraftPackageFactory(owner=stranger, document=example_document()),
        node_id="q-dijkstra",
    )
    client = Client()
    client.force_login(author)
    url = f"/api/v1/packages/{cs201.pk}/bank-insert/"
    refused = client.post(url, {"entryId": str(theirs.pk)}, content_type="application/json")
    assert refused.status_code == 404
    answer = client.post(
        url,
        {"templateId": "explain-concept", "document": {"nodes": "oops"}},
        content_type="application/json",
    )
    assert answer.status_code == 400


def test_api_insert_with_a_revision_saves_and_a_stale_one_is_409(author: Any) -> None:
    draft = services.draft_create(owner=author, document=example_document())
    client = Client()
    client.force_login(author)
    url = f"/api/v1/packages/{draft.pk}/bank-insert/"
    body = {"templateId": "compare-approaches", "revision": draft.revision}
    saved = client.post(url, body, content_type="application/json")
    assert saved.status_code == 200, saved.content
    assert saved.json()["revision"] == draft.revision + 1
    stored = DraftPackage.objects.get(pk=draft.pk)
    assert node_of(stored.document, "compare-approaches")["evidenceTargets"][0]["id"] == (
        "compare-approaches-1"
    )
    assert stored.last_report["result"] == "pass"
    stale = client.post(url, body, content_type="application/json")
    assert stale.status_code == 409
    assert DraftPackage.objects.get(pk=draft.pk).revision == draft.revision + 1


def test_only_the_owner_changes_title_tags_and_sharing(author: Any, cs201: DraftPackage) -> None:
    entry = services.bank_entry_save(owner=author, draft=cs201, node_id="q-dijkstra", shared=True)
    url = f"/api/v1/question-bank/{entry.pk}/"
    other = Client()
    other.force_login(AuthorFactory())
    refused = other.patch(url, {"shared": False}, content_type="application/json")
    assert refused.status_code == 404
    # Another author sees the shared entry but may not retitle or retag it; a proctor may not
    # enter the studio's API at all; what is stored stays as it was.
    for client, status in ((other, 404), (_client(ProctorFactory()), 403)):
        answer = client.patch(
            url, {"title": "Hijacked", "tags": ["mine"]}, content_type="application/json"
        )
        assert answer.status_code == status, answer.content
        assert set(answer.json()["error"]) == {"code", "message", "details"}
    entry.refresh_from_db()
    assert (entry.title, entry.tags, entry.shared) == ("Dijkstra's algorithm", [], True)
    mine = Client()
    mine.force_login(author)
    changed = mine.patch(
        url,
        {"title": " Shortest paths ", "tags": ["Graph Theory"], "shared": False},
        content_type="application/json",
    )
    assert changed.status_code == 200, changed.content
    entry.refresh_from_db()
    assert (entry.title, entry.tags, entry.shared) == ("Shortest paths", ["graph-theory"], False)
    assert other.get(url).status_code == 404
    blank = mine.patch(url, {"title": "  "}, content_type="application/json")
    assert blank.status_code == 400
    # An admin may change anyone's entry.
    admin = _client(AdminFactory())
    retagged = admin.patch(url, {"tags": ["Reviewed"]}, content_type="application/json")
    assert retagged.status_code == 200, retagged.content
    entry.refresh_from_db()
    assert (entry.title, entry.tags) == ("Shortest paths", ["reviewed"])


def _client(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client
