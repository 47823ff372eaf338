"""Review before publish (issue #34): comments on nodes, the owner's approval requirement and
the publication gate that enforces it."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts.models import User
from authoring import selectors, services
from authoring.models import DraftPackage
from publishing.services import PublishNeedsReview, version_publish
from tests.factories import AuthorFactory, CandidateFactory, example_document

pytestmark = pytest.mark.django_db


@pytest.fixture
def owner() -> User:
    return AuthorFactory()


@pytest.fixture
def coauthor() -> User:
    return AuthorFactory()


@pytest.fixture
def draft(owner: User, coauthor: User) -> DraftPackage:
    created = services.draft_create(owner=owner, document=example_document())
    return services.draft_set_collaborators(draft=created, usernames=[coauthor.username])


def _client(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_comment_records_author_node_and_revision_and_resolves(
    draft: DraftPackage, owner: User, coauthor: User
) -> None:
    comment = services.comment_create(
        draft=draft, author=owner, node_id="q-dijkstra", text="Too hard?"
    )
    assert (comment.node_id, comment.revision, comment.resolved) == ("q-dijkstra", 1, False)
    resolved = services.comment_set_resolved(comment=comment, user=coauthor, resolved=True)
    assert resolved.resolved and resolved.resolved_by == coauthor
    reopened = services.comment_set_resolved(comment=comment, user=owner, resolved=False)
    assert not reopened.resolved and reopened.resolved_by is None


def test_a_comment_on_a_removed_node_is_listed_as_removed(draft: DraftPackage, owner: User) -> None:
    services.comment_create(draft=draft, author=owner, node_id="gone-node", text="Hm")
    services.comment_create(draft=draft, author=owner, node_id="", text="Package note")
    listed = selectors.comment_list(user=owner, draft=draft)
    assert [(c.node_id, c.node_removed) for c in listed] == [("gone-node", True), ("", False)]


def test_only_the_owner_requires_approval(draft: DraftPackage, coauthor: User) -> None:
    with pytest.raises(services.ReviewRefused):
        services.draft_set_approval_required(draft=draft, user=coauthor, required=True)


def test_a_coauthor_asking_the_api_to_require_approval_gets_403_and_nothing_changes(
    draft: DraftPackage, coauthor: User
) -> None:
    url = f"/api/v1/packages/{draft.pk}/review/"
    refused = _client(coauthor).patch(
        url, {"approvalRequired": True}, content_type="application/json"
    )
    assert refused.status_code == 403, refused.content
    assert set(refused.json()["error"]) == {"code", "message", "details"}
    assert _client(coauthor).get(url).json()["approvalRequired"] is False


def test_a_save_makes_the_approval_stale_and_publishing_is_refused(
    draft: DraftPackage, owner: User, coauthor: User
) -> None:
    services.draft_set_approval_required(draft=draft, user=owner, required=True)
    with pytest.raises(PublishNeedsReview, match="approval"):
        version_publish(draft=draft, user=owner)
    services.draft_approve(draft=draft, user=coauthor, revision=draft.revision)
    saved = services.draft_save(draft=draft, document=example_document(), expected_revision=1)
    assert not selectors.review_state(draft=saved).approval_current
    with pytest.raises(PublishNeedsReview, match="stale"):
        version_publish(draft=saved, user=owner)
    services.draft_approve(draft=saved, user=coauthor, revision=2)
    assert version_publish(draft=saved, user=owner).created


def test_the_approver_cannot_publish_and_open_comments_block(
    draft: DraftPackage, owner: User, coauthor: User
) -> None:
    services.draft_set_approval_required(draft=draft, user=owner, required=True)
    comment = services.comment_create(draft=draft, author=owner, node_id="", text="Check")
    services.draft_approve(draft=draft, user=coauthor, revision=1)
    with pytest.raises(PublishNeedsReview, match="1 unresolved comment"):
        version_publish(draft=draft, user=owner)
    services.comment_set_resolved(comment=comment, user=coauthor, resolved=True)
    with pytest.raises(PublishNeedsReview, match="someone other than"):
        version_publish(draft=draft, user=coauthor)
    assert version_publish(draft=draft, user=owner).created


def test_comments_api_crud_and_authorization(draft: DraftPackage, coauthor: User) -> None:
    url = f"/api/v1/packages/{draft.pk}/comments/"
    created = _client(coauthor).post(
        url, {"nodeId": "q-dijkstra", "text": "Rubric?"}, content_type="application/json"
    )
    assert created.status_code == 201, created.content
    body = created.json()
    assert (body["author"], body["revision"], body["resolved"]) == (
        coauthor.username,
        1,
        False,
    )
    listed = _client(draft.owner).get(url).json()
    assert [c["text"] for c in listed["comments"]] == ["Rubric?"]
    patched = _client(draft.owner).patch(
        f"{url}{body['id']}/", {"resolved": True}, content_type="application/json"
    )
    assert patched.status_code == 200 and patched.json()["resolved"] is True
    assert _client(AuthorFactory()).get(url).status_code == 404
    assert _client(CandidateFactory()).get(url).status_code == 403


def test_review_api_requires_approves_and_publish_says_what_is_missing(
    draft: DraftPackage, owner: User, coauthor: User
) -> None:
    url = f"/api/v1/packages/{draft.pk}/review/"
    response = _client(owner).patch(
        url, {"approvalRequired": True}, content_type="application/json"
    )
    assert response.status_code == 200 and response.json()["approvalRequired"] is True
    refused = _client(owner).post(f"/api/v1/packages/{draft.pk}/publish/", {})
    assert refused.status_code == 422
    assert refused.json()["error"]["code"] == "review_missing"
    assert "approval" in refused.json()["error"]["message"]
    approved = _client(coauthor).post(
        f"{url}approve/", {"revision": 1}, content_type="application/json"
    )
    assert approved.status_code == 200 and approved.json()["approvalCurrent"] is True
    assert _client(owner).post(f"/api/v1/packages/{draft.pk}/publish/", {}).status_code == 201


def test_the_publish_page_shows_the_approval_state_and_refuses_without_it(
    draft: DraftPackage, owner: User, coauthor: User
) -> None:
    services.draft_set_approval_required(draft=draft, user=owner, required=True)
    page = _client(owner).get(f"/studio/{draft.pk}/publish/")
    assert "Not approved yet." in page.content.decode()
    refused = _client(owner).post(f"/studio/{draft.pk}/publish/", {"revision": 1}, follow=True)
    assert "needs an approval by a co-author" in refused.content.decode()
    assert not draft.versions.exists()
    services.draft_approve(draft=draft, user=coauthor, revision=1)
    page = _client(owner).get(f"/studio/{draft.pk}/publish/")
    assert f"Approved by {coauthor.name} at revision 1." in page.content.decode()
