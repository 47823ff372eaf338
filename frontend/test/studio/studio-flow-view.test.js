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

test("four stacked labels fit the rank separation; more need a wider gap", () => {
  assert.equal(view.labelGap(4), 100); // the layout's rankSep
  assert.ok(view.labelGap(7) >= 7 * view.EDGE_LABEL_STEP);
});

test("a gap is widened for a stack of more than four labels, the rest of the picture keeps its spacing", () => {
  // Three ranks as dagre spaces them: 100 from the lowest bottom of one rank to the highest top
  // of the next (node boxes 56 high, a taller pool), a node beside the first one.
  const nodes = [
    { id: "a", y1: 0, y2: 56 },
    { id: "side", y1: 0, y2: 56 },
    { id: "b", y1: 164, y2: 220 },
    { id: "pool", y1: 156, y2: 228 }, // taller, same rank as b
    { id: "c", y1: 328, y2: 384 },
  ];
  const seven = view.rankGaps(nodes, [{ source: "a", count: 7 }, { source: "b", count: 3 }]);
  const extra = view.labelGap(7) - 100;
  assert.deepEqual(Object.fromEntries(seven.shifts), { a: 0, side: 0, b: extra, pool: extra, c: extra });
  assert.deepEqual(seven.gaps.get("a"), { top: 56, bottom: 156 + extra }); // to the pool's top
  // b's gap is measured from the pool's bottom (its rank's lowest) and was wide enough already.
  assert.deepEqual(seven.gaps.get("b"), { top: 228 + extra, bottom: 328 + extra });
  const four = view.rankGaps(nodes, [{ source: "a", count: 4 }]);
  assert.ok([...four.shifts.values()].every((dy) => dy === 0));
  // Nothing below: no gap, no move.
  const last = view.rankGaps(nodes, [{ source: "c", count: 7 }]);
  assert.equal(last.gaps.has("c"), false);
  assert.ok([...last.shifts.values()].every((dy) => dy === 0));
});

test("a node's stack is centred in its gap below, a line apart, whatever the curves' middles", () => {
  const step = view.EDGE_LABEL_STEP;
  const edges = [0, 1, 2, 3, 4, 5, 6].map((i) => ({ id: "a" + i, source: "a", y: 100 + (i % 3) * 30 }));
  const gap = { top: 56, bottom: 56 + view.labelGap(7) };
  const offsets = view.edgeLabelOffsets(edges, new Map([["a", gap]]));
  const placed = edges.map((e) => e.y + offsets.get(e.id));
  const middle = (gap.top + gap.bottom) / 2;
  assert.deepEqual(placed, [-3, -2, -1, 0, 1, 2, 3].map((k) => middle + k * step));
  // A label's box (at most a line high) keeps clear of both nodes.
  assert.ok(placed[0] - step / 2 >= gap.top && placed[6] + step / 2 <= gap.bottom);
});

test("a label moved up or down its stack stays on its own curve", () => {
  // A straight edge (control point in its middle) and a curve bowed 80 to the right.
  const from = { x: 0, y: 0 };
  const to = { x: 0, y: 200 };
  assert.equal(view.curveXAt(from, { x: 0, y: 100 }, to, 50), 0);
  assert.equal(view.curveXAt({ x: 0, y: 0 }, { x: 50, y: 100 }, { x: 100, y: 200 }, 50), 25); // diagonal
  const bowed = { x: 160, y: 100 }; // the curve's middle is at x 80
  assert.equal(view.curveXAt(from, bowed, to, 100), 80);
  assert.equal(view.curveXAt(from, bowed, to, 50), 60); // t = 1/4: 2 · 3/4 · 1/4 · 160
  assert.equal(view.curveXAt(from, bowed, to, 0), 0);
  assert.equal(view.curveXAt(from, bowed, to, 250), null); // past its end
  // Upwards (a transition back to an earlier node) as well.
  assert.equal(view.curveXAt(to, bowed, from, 150), 60);
});
