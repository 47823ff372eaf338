#!/usr/bin/env python
"""The studio's flow picture on large packages, timed in Chromium (issue #34).

For packages of 20, 60 and 100 nodes generated from ``examples/cs201-graph-algorithms.json``
(:func:`large_package`: the example's question, its pool of two scenarios and their
transitions repeated, with follow-up branches and long titles), prints the median and p95 of

- **drawn**: from the start of navigation to the first frame in which the picture has its
  elements (``window.vivaStudio.flow`` exists and has labels), in ms;
- **drawn cpu**: of that, the CPU time in the graph bundle (Cytoscape and dagre: layout, style,
  rendering; Chromium's sampling profiler), in ms;
- **redraw**: an edit through the flow's own form ("Add a transition to ..."), from the click
  to the second frame after it (the document written into the JSON editor, the picture, outline
  and form redrawn and painted), in ms;
- **edit cpu**: the CPU time in the graph bundle from that click until the edit is autosaved and
  validated (the picture's redraws for the edit and for the validation reply), in ms.

``--baseline REV`` serves ``static/js/studio-flow.js`` and ``static/vendor/studio-graph.js`` as
they were at ``REV`` (``git show``; intercepted in the browser, the checkout is untouched), to
compare with the code before a change. A fresh daphne on a throw-away database
(``test_<name>_studio_graph``).

Usage: ``DATABASE_URL=postgres://... python bench/studio_graph.py [--runs 10] [--baseline HEAD~1]``
"""

from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "cs201-graph-algorithms.json"
SIZES = (20, 60, 100)
FIXED_NODES = 6  # warmup, wrapup and the four end nodes
LONG_TITLE = "{title}, part {i}: the same reasoning on a network whose weights change over time"

# The first frame after the picture is drawn (works on old and new studio-flow.js alike).
DRAWN_PROBE = """(() => {
  const poll = () => {
    const flow = window.vivaStudio && window.vivaStudio.flow;
    if (flow && flow.labelSizes().length) window.__flowDrawnAt = performance.now();
    else requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
})();"""

GRAPH_BUNDLE = "vendor/studio-graph"

# The node's form, drawn once the schema has arrived, with its "Add a transition to ..." button.
FORM_READY = """async (nodeId) => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  window.vivaStudio.flow.select({ type: "node", id: nodeId });
  while (!document.querySelector("#flow-form .form-actions button")) await frame();
}"""

REDRAW = """async () => {
  const frame = () => new Promise((resolve) => requestAnimationFrame(resolve));
  const button = [...document.querySelectorAll("#flow-form button")]
    .find((b) => b.textContent.startsWith("Add a transition to"));
  const started = performance.now();
  button.click();
  await frame();
  await frame();
  return performance.now() - started;
}"""

# The edit saved and validated (the picture redrawn for the validation reply).
SAVED = """() => document.getElementById("autosave-status").textContent === "All changes saved"
  && document.getElementById("report-summary").textContent !== 'Validating…'"""


# --- the generated packages ---------------------------------------------------------------------


def _renamed(node: dict[str, Any], suffix: str) -> dict[str, Any]:
    """A copy of ``node`` whose own ids (node, evidence targets, transitions) end in ``suffix``."""
    out = copy.deepcopy(node)
    out["nodeId"] += suffix
    targets = {t["id"]: t["id"] + suffix for t in out.get("evidenceTargets", [])}
    for target in out.get("evidenceTargets", []):
        target["id"] = targets[target["id"]]
    policy = out.get("completionPolicy") or {}
    if "requiredEvidenceTargetIds" in policy:
        policy["requiredEvidenceTargetIds"] = [
            targets.get(t, t) for t in policy["requiredEvidenceTargetIds"]
        ]
    for transition in out.get("transitions", []):
        transition["id"] += suffix
        condition = transition["condition"]
        if "targetIds" in condition:
            condition["targetIds"] = [targets.get(t, t) for t in condition["targetIds"]]
    return out


def _retarget(node: dict[str, Any], target: str) -> None:
    for transition in node.get("transitions", []):
        transition["targetNodeId"] = target


def _block(
    document: dict[str, Any], i: int, follow_up: bool
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Block ``i``: a question, optionally a follow-up branch, and a pool of two scenarios."""
    by_id = {n["nodeId"]: n for n in document["nodes"]}
    suffix = f"-{i}"
    question = _renamed(by_id["q-dijkstra"], suffix)
    if i % 4 == 0:
        question["title"] = LONG_TITLE.format(title=question["title"], i=i)
    pool = copy.deepcopy(document["questionPools"][0])
    pool["poolId"] = f"pool{suffix}"
    _retarget(question, pool["poolId"])
    scenarios = [
        _renamed(by_id[name], suffix) for name in ("scn-delivery-routes", "scn-network-latency")
    ]
    pool["nodeIds"] = [s["nodeId"] for s in scenarios]
    block = [question]
    if follow_up:
        branch = _renamed(by_id["q-dijkstra"], f"-follow{suffix}")
        branch["title"] = f"Follow-up {i}: negative weights"
        _retarget(branch, pool["poolId"])
        question["transitions"].insert(
            0,
            {
                "id": f"e-q{suffix}-follow",
                "targetNodeId": branch["nodeId"],
                "condition": {"type": "turn_count_reached", "count": 4},
            },
        )
        block.append(branch)
    return block + scenarios, pool


def large_package(size: int) -> dict[str, Any]:
    """A valid-shaped package of exactly ``size`` nodes (at least 9) from the CS201 example."""
    document = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    by_id = {n["nodeId"]: n for n in document["nodes"]}
    blocks, extra = divmod(size - FIXED_NODES, 3)
    if blocks < 1:
        raise ValueError("a generated package has at least 9 nodes")
    middle: list[dict[str, Any]] = []
    pools = []
    for i in range(1, blocks + 1):
        block, pool = _block(document, i, follow_up=i <= extra)
        if middle:
            for scenario in middle[-2:]:
                _retarget(scenario, block[0]["nodeId"])
        middle += block
        pools.append(pool)
    _retarget(by_id["warmup"], middle[0]["nodeId"])
    ends = [n for n in document["nodes"] if n["kind"] == "end"]
    document["nodes"] = [by_id["warmup"], *middle, by_id["wrapup"], *ends]
    document["questionPools"] = pools
    document["metadata"]["title"] = f"Generated flow of {size} nodes"
    assert len(document["nodes"]) == size, len(document["nodes"])
    return document


# --- the measurement ----------------------------------------------------------------------------


def summary(samples: list[float]) -> str:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):7.1f} ms   p95 {p95:7.1f} ms   (n={len(ordered)})"


def _fulfil_with(body: bytes) -> Any:
    return lambda route, request: route.fulfill(body=body, content_type="text/javascript")


def serve_baseline(page: Any, rev: str) -> None:
    """Serve the flow's script and the graph bundle as they were at ``rev``."""
    for pattern, path in (
        ("**/js/studio-flow*.js", "static/js/studio-flow.js"),
        ("**/vendor/studio-graph*.js", "static/vendor/studio-graph.js"),
    ):
        body = subprocess.run(
            ["git", "show", f"{rev}:{path}"], cwd=ROOT, check=True, capture_output=True
        ).stdout
        page.route(pattern, _fulfil_with(body))


class PictureProfile:
    """Chromium's sampling profiler over a stretch of the page's life: the CPU time spent in the
    graph bundle (Cytoscape and dagre: layout, style, rendering), whoever called it."""

    def __init__(self, page: Any) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Profiler.enable")
        self.cdp.send("Profiler.setSamplingInterval", {"interval": 250})

    def start(self) -> None:
        self.cdp.send("Profiler.start")

    def stop(self) -> float:
        profile = self.cdp.send("Profiler.stop")["profile"]
        nodes = {n["id"]: n for n in profile["nodes"]}
        parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", [])}

        def in_picture(sample: int | None) -> bool:
            while sample is not None:
                if GRAPH_BUNDLE in nodes[sample]["callFrame"]["url"]:
                    return True
                sample = parent.get(sample)
            return False

        samples = zip(profile["samples"], profile["timeDeltas"], strict=True)
        return sum(delta for sample, delta in samples if in_picture(sample)) / 1000


def wait_for(page: Any, script: str, what: str) -> Any:
    """Poll the page's state until ``script`` gives a value (30 s at most)."""
    deadline = time.monotonic() + 30
    while not (value := page.evaluate(script)):
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.02)  # polling the page's state, not waiting for it to happen
    return value


def measure(page: Any, draft_id: int, node_id: str, runs: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in ("drawn", "drawn cpu", "redraw", "edit cpu")}
    profiler = PictureProfile(page)
    for _ in range(runs):
        profiler.start()
        page.goto(f"/studio/{draft_id}/")
        out["drawn"].append(wait_for(page, "() => window.__flowDrawnAt", "never drawn"))
        out["drawn cpu"].append(profiler.stop())
        page.evaluate(FORM_READY, node_id)
        profiler.start()
        out["redraw"].append(page.evaluate(REDRAW))
        wait_for(page, SAVED, "the edit was never saved")
        out["edit cpu"].append(profiler.stop())
    return out


def sign_in(page: Any, username: str, password: str) -> None:
    page.goto("/accounts/login/")
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(lambda url: "/accounts/login/" not in url)


def run(runs: int, baseline: str | None) -> None:
    from playwright.sync_api import sync_playwright

    from bench.chromium import CHROMIUM, database_url
    from tests.factories import PASSWORD, AuthorFactory, DraftPackageFactory
    from tests.support.processes import asgi_server

    author = AuthorFactory()
    drafts = {n: DraftPackageFactory(owner=author, document=large_package(n)) for n in SIZES}
    server = asgi_server(DATABASE_URL=database_url(), DJANGO_ALLOW_ASYNC_UNSAFE="")
    with server as address, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM)
        page = browser.new_page(
            base_url=f"http://{address}", locale="en-GB", viewport={"width": 1280, "height": 900}
        )
        page.add_init_script(DRAWN_PROBE)
        if baseline:
            serve_baseline(page, baseline)
        sign_in(page, author.username, PASSWORD)
        print(f"studio flow picture, {'baseline ' + baseline if baseline else 'working tree'}")
        for size, draft in drafts.items():
            for name, samples in measure(page, draft.id, "q-dijkstra-1", runs).items():
                print(f"  {size:3d} nodes  {name:9}  {summary(samples)}")
        browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--baseline", help="a git revision whose flow script to time instead")
    args = parser.parse_args()
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")  # the ORM beside sync Playwright
    import django

    django.setup()
    from django.db import connections

    from bench.scratch import scratch_database

    with scratch_database("studio_graph"):
        run(args.runs, args.baseline)
        connections.close_all()
        time.sleep(1.0)  # the server's backends close after its process
    return 0


if __name__ == "__main__":
    sys.exit(main())
