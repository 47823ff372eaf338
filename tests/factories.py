"""factory_boy factories shared by the tests."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import factory
from django.utils import timezone

from accounts.models import User
from accounts.roles import Role

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def example_document(name: str = "cs201-graph-algorithms") -> dict[str, Any]:
    """A deep copy of an example package."""
    return copy.deepcopy(json.loads((EXAMPLES / f"{name}.json").read_text(encoding="utf-8")))


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = User
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    role = Role.AUTHOR
    display_name = factory.Faker("name")
    password = factory.PostGenerationMethodCall("set_password", "correct horse battery staple")

    @factory.post_generation
    def _save(obj: User, create: bool, extracted: Any, **kwargs: Any) -> None:
        if create:
            obj.save()


class AuthorFactory(UserFactory):
    role = Role.AUTHOR


class ProctorFactory(UserFactory):
    role = Role.PROCTOR


class AdminFactory(UserFactory):
    role = Role.ADMIN


class CandidateFactory(UserFactory):
    role = Role.CANDIDATE
    username = factory.Sequence(lambda n: f"candidate{n}@example.test")
    email = factory.SelfAttribute("username")


class DraftPackageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "authoring.DraftPackage"

    owner = factory.SubFactory(AuthorFactory)
    title = factory.LazyAttribute(lambda o: o.document.get("metadata", {}).get("title", "Draft"))
    document = factory.LazyFunction(example_document)
    created_at = factory.LazyFunction(timezone.now)
    updated_at = factory.LazyFunction(timezone.now)


PASSWORD = "correct horse battery staple"
