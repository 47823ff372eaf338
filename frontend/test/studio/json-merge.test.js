// static/js/json-merge.js: the studio's three-way merge after "someone else saved first".
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const { merge3 } = require("../../../static/js/json-merge.js");

const base = {
  metadata: { title: "Graph algorithms viva", language: "en" },
  learningOutcomes: [
    { id: "LO1", text: "Explain Dijkstra" },
    { id: "LO2", text: "Analyse complexity" },
  ],
  nodes: [
    { nodeId: "warmup", kind: "warmup", prompt: "Tell me about yourself." },
    { nodeId: "q1", kind: "core", prompt: "How does Dijkstra work?", followUps: 2 },
    { nodeId: "end", kind: "end" },
  ],
};
const copy = (value) => JSON.parse(JSON.stringify(value));

test("edits of different fields, outcomes and nodes are all kept, without conflict", () => {
  const mine = copy(base);
  mine.nodes[1].prompt = "Walk me through Dijkstra's algorithm.";
  mine.learningOutcomes.push({ id: "LO3", text: "Compare with Bellman-Ford" });
  const theirs = copy(base);
  theirs.metadata.title = "CS201 graph algorithms viva";
  theirs.nodes[1].followUps = 3;
  theirs.nodes.splice(2, 0, { nodeId: "q2", kind: "core", prompt: "What is its complexity?" });

  const { merged, conflicts } = merge3(base, mine, theirs);
  assert.deepEqual(conflicts, []);
  assert.equal(merged.metadata.title, "CS201 graph algorithms viva");
  assert.equal(merged.nodes[1].prompt, "Walk me through Dijkstra's algorithm.");
  assert.equal(merged.nodes[1].followUps, 3);
  assert.deepEqual(merged.nodes.map((n) => n.nodeId), ["warmup", "q1", "q2", "end"]);
  assert.deepEqual(merged.learningOutcomes.map((o) => o.id), ["LO1", "LO2", "LO3"]);
});

test("a node one side added lands after its neighbour in the other's order", () => {
  const mine = copy(base);
  mine.nodes.splice(1, 0, { nodeId: "q0", kind: "core", prompt: "What is a graph?" });
  const theirs = copy(base);
  theirs.nodes.reverse();
  const { merged, conflicts } = merge3(base, mine, theirs);
  assert.deepEqual(conflicts, []);
  assert.deepEqual(merged.nodes.map((n) => n.nodeId), ["end", "q1", "warmup", "q0"]);
});

test("the same field changed differently is a conflict that keeps mine and names the place", () => {
  const mine = copy(base);
  mine.nodes[1].prompt = "Explain Dijkstra.";
  const theirs = copy(base);
  theirs.nodes[1].prompt = "Describe Dijkstra.";
  const { merged, conflicts } = merge3(base, mine, theirs);
  assert.equal(merged.nodes[1].prompt, "Explain Dijkstra.");
  assert.deepEqual(conflicts, [{ path: "nodes[q1].prompt", mine: "Explain Dijkstra.", theirs: "Describe Dijkstra." }]);
});

test("a removal is taken unless the other side edited what was removed", () => {
  const mine = copy(base);
  mine.learningOutcomes = mine.learningOutcomes.filter((o) => o.id !== "LO2");
  const theirs = copy(base);
  theirs.metadata.language = "de";
  let result = merge3(base, mine, theirs);
  assert.deepEqual(result.conflicts, []);
  assert.deepEqual(result.merged.learningOutcomes.map((o) => o.id), ["LO1"]);
  assert.equal(result.merged.metadata.language, "de");

  theirs.learningOutcomes[1].text = "Analyse the running time";
  result = merge3(base, mine, theirs);
  assert.deepEqual(result.conflicts.map((c) => c.path), ["learningOutcomes[LO2]"]);
});

test("the same change on both sides is taken once; a key one side removed stays removed", () => {
  const mine = copy(base);
  const theirs = copy(base);
  mine.metadata.language = theirs.metadata.language = "es";
  delete theirs.metadata.title;
  const { merged, conflicts } = merge3(base, mine, theirs);
  assert.deepEqual(conflicts, []);
  assert.deepEqual(merged.metadata, { language: "es" });
});

test("arrays without ids (text lists) changed on both sides are one conflict", () => {
  const withHints = { ...copy(base), hints: ["a", "b"] };
  const mine = { ...copy(withHints), hints: ["a", "b", "c"] };
  const theirs = { ...copy(withHints), hints: ["b"] };
  const { merged, conflicts } = merge3(withHints, mine, theirs);
  assert.deepEqual(merged.hints, ["a", "b", "c"]);
  assert.deepEqual(conflicts.map((c) => c.path), ["hints"]);
});

test("prefer theirs takes their value at each conflict and still merges the rest", () => {
  const mine = copy(base);
  mine.nodes[1].prompt = "Explain Dijkstra.";
  mine.metadata.language = "de";
  const theirs = copy(base);
  theirs.nodes[1].prompt = "Describe Dijkstra.";
  const { merged, conflicts } = merge3(base, mine, theirs, "theirs");
  assert.equal(merged.nodes[1].prompt, "Describe Dijkstra.");
  assert.equal(merged.metadata.language, "de");
  assert.equal(conflicts.length, 1);
});
