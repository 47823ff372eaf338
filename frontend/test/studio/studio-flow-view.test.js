// static/js/studio-flow.js, the picture's pure helpers (VivaFlowView): shortened labels, the
// candidate's order the layout keeps top to bottom, and the zoom arithmetic that keeps labels
// legible (12 px on screen from READABLE_ZOOM up).
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const view = require("../../../static/js/studio-flow.js");

test("a short label is kept, on one line", () => {
  assert.equal(view.shorten("Dijkstra's  algorithm\n", 22), "Dijkstra's algorithm");
  assert.equal(view.shorten(null, 22), "");
});

test("a long label is cut at a space, with an ellipsis, within the limit", () => {
  const long = "Delivery routes scenario, part 4: the same reasoning";
  const short = view.shorten(long, 22);
  assert.equal(short, "Delivery routes…");
  assert.ok(short.length <= 22);
});

test("a long word is cut inside it", () => {
  const short = view.shorten("q-dijkstra-follow-up-negative-weights", 22);
  assert.equal(short, "q-dijkstra-follow-up…");
  assert.equal(short.length, 21);
});

test("the candidate's order is breadth first from the start, then the rest", () => {
  const graph = { warmup: ["q1"], q1: ["pool"], pool: ["a", "b"], a: ["end"], b: ["end", "q1"], end: [], lost: ["end"] };
  const order = view.candidateOrder("warmup", (id) => graph[id], (id) => id in graph, Object.keys(graph));
  assert.deepEqual(order, ["warmup", "q1", "pool", "a", "b", "end", "lost"]);
});

test("unknown ids and a missing start are skipped", () => {
  const graph = { q1: ["gone", "q2"], q2: [] };
  assert.deepEqual(view.candidateOrder("q1", (id) => graph[id], (id) => id in graph, ["q1", "q2"]), ["q1", "q2"]);
  assert.deepEqual(view.candidateOrder(null, (id) => graph[id], (id) => id in graph, ["q2", "q1"]), ["q2", "q1"]);
});

test("only edges forward in the order rank the layout: loops back and self-loops do not", () => {
  const order = ["warmup", "q1", "q2", "end"];
  const edges = [
    { id: "a", source: "warmup", target: "q1" },
    { id: "back", source: "q2", target: "q1" },
    { id: "self", source: "q1", target: "q1" },
    { id: "b", source: "q1", target: "end" },
  ];
  assert.deepEqual(view.forwardEdges(order, edges).map((e) => e.id), ["a", "b"]);
});

test("the readable zoom puts 13-unit labels at 12 px", () => {
  assert.equal(view.LABEL_PX * view.READABLE_ZOOM, 12);
  assert.ok(view.readable(view.READABLE_ZOOM));
  assert.ok(!view.readable(view.READABLE_ZOOM * 0.99));
});

test("zoom steps stop on the readable zoom and stay within the bounds", () => {
  const overview = 0.3;
  assert.equal(view.stepZoom(1, -1, overview), view.READABLE_ZOOM); // 0.8 would cross it
  assert.ok(Math.abs(view.stepZoom(view.READABLE_ZOOM, -1, overview) - view.READABLE_ZOOM / 1.25) < 1e-12);
  assert.equal(view.stepZoom(0.31, -1, overview), overview);
  assert.equal(view.stepZoom(0.8, 1, overview), view.READABLE_ZOOM); // 1.0 would cross it
  assert.equal(view.stepZoom(0.7, 1, overview), 0.875);
  assert.equal(view.stepZoom(2.4, 1, overview), view.MAX_ZOOM);
  // A flow that fits at a legible size cannot be zoomed out below the readable zoom.
  assert.equal(view.stepZoom(view.READABLE_ZOOM, -1, 1.5), view.READABLE_ZOOM);
});

test("a small flow is fitted whole, never above 1.25", () => {
  const fit = view.readableView({ x1: 0, y1: 0, w: 200, h: 100 }, { width: 800, height: 480 }, null);
  assert.equal(fit.zoom, 1.25);
  assert.deepEqual(fit.pan, { x: 400 - 100 * 1.25, y: 240 - 50 * 1.25 });
});

test("a large flow is shown at the readable zoom from the top, around its focus", () => {
  const box = { x1: -500, y1: 0, w: 3000, h: 6000 };
  const top = view.readableView(box, { width: 800, height: 480 }, { x: 1000, y: 30 });
  assert.equal(top.zoom, view.READABLE_ZOOM);
  assert.equal(top.pan.y, 16); // the top of the flow, not above it
  assert.equal(top.pan.x, 400 - 1000 * view.READABLE_ZOOM);
  const deep = view.readableView(box, { width: 800, height: 480 }, { x: 1000, y: 4000 });
  assert.equal(deep.pan.y, 160 - 4000 * view.READABLE_ZOOM); // a third down the view
});

test("the labels of one node's transitions are stacked a line apart, in order, around their middle", () => {
  const step = view.EDGE_LABEL_STEP;
  const edges = [
    { id: "a0", source: "a", y: 100 },
    { id: "b0", source: "b", y: 40 },
    { id: "a1", source: "a", y: 104 },
    { id: "a2", source: "a", y: 96 },
  ];
  const offsets = view.edgeLabelOffsets(edges);
  const placed = (id) => edges.find((e) => e.id === id).y + offsets.get(id);
  assert.equal(offsets.get("b0"), 0); // a lone transition stays on its curve
  assert.deepEqual(["a0", "a1", "a2"].map(placed), [100 - step, 100, 100 + step]);
  for (const [x, y] of [["a0", "a1"], ["a1", "a2"]]) assert.ok(placed(y) - placed(x) >= step);
});
