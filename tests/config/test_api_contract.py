"""The live API keeps its published contract, for every role (issue #18).

Schemathesis (requirements/dev.txt) reads /api/schema/ from a real daphne serving the app and
sends generated requests, valid and invalid, to every operation as each role: anonymous, a
candidate, an author (the examiner who writes and marks), a proctor and an administrator, each
with an API token. Path parameters are, most of the time, the ids of real objects the role's
party owns (a draft, its published version, a sitting, a completed and marked session), so the
requests reach the views rather than stopping at 404.

The run is bounded and reproducible (deterministic generation, a few examples per operation)
and prints its counts; it fails on any server error (5xx) and on any answer the schema does not
describe: a body that violates its schema, an undocumented status code or content type.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from django.conf import settings
from django.test import Client

from accounts.services import api_token_issue
from tests.config.test_api_permissions import World, build_world
from tests.factories import AuthorFactory
from tests.support.processes import asgi_server, asgi_server_process

SCHEMATHESIS = Path(sys.executable).parent / "st"
CHECKS = (
    "not_a_server_error",
    "response_schema_conformance",
    "status_code_conformance",
    "content_type_conformance",
)
# party in the permission walk's world → examples per operation (the roles that reach the views
# get more; anonymous and candidate requests stop at 401/403).
ROLES = {"anonymous": 1, "candidate A": 1, "author A": 4, "proctor A": 4, "admin": 4}
OBJECTS = {
    "draft_id": "draft",
    "version_id": "version",
    "sitting_id": "sitting",
    "session_id": "session",
}


@dataclass
class RoleRun:
    role: str
    operations: int
    cases: int
    failures: Counter[str]
    output: str


def config_file(world: World, path: Path, examples: int) -> Path:
    """Examples per operation, and real object ids for the path parameters (80 % of the time;
    generated otherwise)."""
    lines = [f"generation.max-examples = {examples}", ""]
    for name in OBJECTS.values():
        lines += [f"[dictionaries.{name}]", f'values = ["{world.ids[name]}"]', ""]
    lines.append("[parameters]")
    for parameter, name in OBJECTS.items():
        lines.append(f'"path.{parameter}" = {{ dictionary = "{name}", probability = 0.8 }}')
    # A draft's dry run simulates candidates through the runtime: seconds each, one is enough.
    lines += [
        "",
        "[[operations]]",
        'include-path-regex = "/dry-run/$"',
        'include-method = "POST"',
        "generation.max-examples = 1",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def credentials(role: str, world: World) -> list[str]:
    """The role's identity: an API token; the candidate (who holds none) their session."""
    if role == "anonymous":
        return []
    user = world.users[role]
    if user.role == "candidate":
        client = Client()
        client.force_login(user)
        cookie = client.cookies[settings.SESSION_COOKIE_NAME].value
        return ["--header", f"Cookie: {settings.SESSION_COOKIE_NAME}={cookie}"]
    key = api_token_issue(user=user, name="schemathesis").key
    return ["--header", f"Authorization: Token {key}"]


def run_as(role: str, world: World, server: str, workdir: Path) -> RoleRun:
    report = workdir / f"{role.replace(' ', '-')}.json"
    command = [
        str(SCHEMATHESIS),
        "--config-file",
        str(config_file(world, workdir / "schemathesis.toml", ROLES[role])),
        "run",
        f"http://{server}/api/schema/?format=json",
        *credentials(role, world),
        "--checks",
        ",".join(CHECKS),
        "--generation-deterministic",
        "--generation-with-security-parameters",
        "false",
        "--phases",
        "examples,fuzzing",
        "--workers",
        "2",
        "--request-timeout",
        "60",
        "--no-shrink",
        "--no-color",
        "--warnings",
        "off",
        "--report",
        "json",
        "--report-json-path",
        str(report),
    ]
    done = subprocess.run(command, cwd=workdir, capture_output=True, text=True, timeout=600)
    if not report.exists():
        raise AssertionError(done.stdout + done.stderr)
    return summarise(role, json.loads(report.read_text()), done.stdout + done.stderr)


def summarise(role: str, report: dict[str, Any], output: str) -> RoleRun:
    """The counts of schemathesis's JSON run report (``--report json``)."""
    assert report["complete"], output
    assert not report["errors"], output  # a case that could not even be sent or checked
    failures: Counter[str] = Counter()
    for failure in report["failures"]:
        failures[f"{failure['code']} {failure['title']}"] += failure["count"]
    return RoleRun(
        role=role,
        operations=report["operations"]["tested"],
        cases=report["test_cases"]["generated"],
        failures=failures,
        output=output,
    )


@pytest.mark.services("postgres", "redis")
@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(900)
def test_every_role_gets_only_documented_answers(tmp_path: Path) -> None:
    world = build_world(marked=True)
    runs = []
    # The run is a few hundred requests a minute per user: well over the API's default rates
    # (their 429 is checked below, test_the_rate_limit_answers_the_documented_429).
    # The server logs to a file: thousands of requests would fill an unread pipe and stall it.
    rates = {"VIVA_API_RATE_USER": "100000/min", "VIVA_API_RATE_ANON": "100000/min"}
    log = str(tmp_path / "daphne.log")
    started = time.monotonic()
    with asgi_server_process(log_path=log, **rates) as (server, _):
        for role in ROLES:
            runs.append(run_as(role, world, server, tmp_path))
    print(
        f"\nschemathesis {len(runs)} roles: {sum(r.cases for r in runs)} cases "
        f"in {time.monotonic() - started:.0f} s"
    )
    for run in runs:
        print(
            f"schemathesis as {run.role}: {run.operations} operations, {run.cases} cases, "
            f"failures {dict(run.failures) or 'none'}"
        )
    problems = [f"{run.role}:\n{run.output}" for run in runs if run.failures]
    assert not problems, "\n\n".join(problems)


@pytest.mark.services("postgres", "redis")
@pytest.mark.django_db(transaction=True)
def test_the_rate_limit_answers_the_documented_429() -> None:
    key = api_token_issue(user=AuthorFactory(), name="test").key
    with asgi_server(VIVA_API_RATE_USER="3/min") as server:
        headers = {"Authorization": f"Token {key}"}
        answers = [
            httpx.get(f"http://{server}/api/v1/me/", headers=headers, timeout=60) for _ in range(4)
        ]
    assert [answer.status_code for answer in answers] == [200, 200, 200, 429]
    assert answers[-1].headers["content-type"] == "application/json"
    error = answers[-1].json()["error"]
    assert error["code"] == "throttled"
    assert 0 < error["details"]["retryAfterSeconds"] <= 60
