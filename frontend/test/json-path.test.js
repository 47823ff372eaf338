// `npm test`: the path -> position mapping, without a browser.
import assert from "node:assert/strict";
import { test } from "node:test";

import { json } from "@codemirror/lang-json";
import { EditorState } from "@codemirror/state";

import { locatePath, parsePath, pointerToSteps, stepsToPath } from "../src/json-path.js";

const doc = JSON.stringify(
  {
    metadata: { title: "T", "odd key": 1 },
    questionPools: [{ poolId: "pool-x", nodeIds: ["a", "b"] }],
    nodes: [
      { nodeId: "a", kind: "question", followUpPolicy: { maxFollowUps: 3 } },
      { nodeId: "b", kind: "end" },
    ],
  },
  null,
  2,
);
const state = EditorState.create({ doc, extensions: [json()] });
const lineOf = (path) => state.doc.lineAt(locatePath(state, path).from).text.trim();
const selected = (path) => {
  const { anchor, head } = locatePath(state, path).cursor;
  return state.sliceDoc(anchor, head);
};

test("parsePath splits keys, selectors and quoted keys", () => {
  assert.deepEqual(parsePath('$.nodes[q-1].a["odd key"][0]'), [
    { key: "nodes" }, { select: "q-1" }, { key: "a" }, { key: "odd key" }, { select: "0" },
  ]);
  assert.deepEqual(parsePath("$"), []);
});

test("paths by key, index and id", () => {
  assert.equal(lineOf("metadata.title"), '"title": "T",');
  assert.equal(selected("metadata.title"), '"T"');
  assert.equal(lineOf('metadata["odd key"]'), '"odd key": 1');
  assert.equal(lineOf("nodes[1].kind"), '"kind": "end"');
  assert.equal(lineOf("nodes[a]"), '"nodeId": "a",');
  assert.equal(selected("nodes[a].followUpPolicy.maxFollowUps"), "3");
  assert.equal(lineOf("questionPools[pool-x].nodeIds"), '"nodeIds": [');
  assert.equal(selected("questionPools[0].nodeIds[1]"), '"b"');
  assert.equal(lineOf("$"), "{");
});

test("a path that goes nowhere lands on the closest existing place", () => {
  const place = locatePath(state, "nodes[b].transitions[0]");
  assert.equal(place.found, false);
  assert.equal(place.matched, 2);
  assert.equal(state.doc.lineAt(place.from).text.trim(), '"nodeId": "b",');
});

test("JSON pointers convert to steps and back to report paths", () => {
  assert.deepEqual(pointerToSteps("#/nodes/0/a~1b"), [{ key: "nodes" }, { key: "0" }, { key: "a/b" }]);
  assert.equal(stepsToPath(pointerToSteps("#/nodes/0/followUpPolicy")), "nodes[0].followUpPolicy");
  assert.equal(stepsToPath([]), "$");
});
