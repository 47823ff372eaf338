// Authoring studio: the flow as a picture, its text outline, and forms for every part of the
// package. No framework. Reads and writes the document through window.vivaStudio (studio.js):
// every form edit replaces the JSON editor's text (validated live like typing), every editor
// change redraws the picture and the outline. Findings of the validation report are pinned on
// the nodes and transitions they concern and shown beside the form fields at their paths.
//
// The picture is Cytoscape.js + dagre (static/vendor/studio-graph.js, built from frontend/). It is
// keyboard-operable (focus it, arrows move between nodes, Enter edits) and the ordered outline
// below it is its text alternative, with the same actions. Forms are generated from the package
// JSON Schema (GET /api/v1/schema/package/).
//
// While the author types, the form's fields are the source of truth: typing is written into the
// document after a short pause, and every action (an "Add ..." or "Remove ..." button, a choice,
// selecting another part, leaving the field, Save, publish, navigation) first flushes what is
// pending. Actions read the document at the time they run, never a copy taken when the form was
// drawn (the document object is replaced on every write). A validation reply only annotates the
// fields (findings, aria-invalid); it never redraws the form, so no field is overwritten under
// the author's fingers. The form is redrawn from the document only for a change made elsewhere
// (the JSON editor) while the author is not in the form and nothing is pending.

// Pure helpers of the picture (no DOM, no Cytoscape): the candidate's order that the layout keeps
// top to bottom, shortened labels, and the zoom arithmetic that keeps labels legible. Exported for
// node (frontend/test/studio/studio-flow-view.test.js), window.VivaFlowView in the page.
const VivaFlowView = (function () {
  "use strict";
  // Labels are LABEL_PX in the picture's own units: at READABLE_ZOOM they are 12 px on screen.
  const LABEL_PX = 13;
  const READABLE_ZOOM = 12 / LABEL_PX;
  const MAX_ZOOM = 2.5;
  const ZOOM_STEP = 1.25;
  const NODE_LABEL_CHARS = 24; // one line of a 160-unit-wide node label
  const EDGE_LABEL_CHARS = 20; // along an edge between two ranks (rankSep 100)
  // One transition label's line (LABEL_PX text, its padding and outline) plus a gap: four of a
  // node's labels stacked fit between two ranks (rankSep 100) without touching either node.
  const EDGE_LABEL_STEP = 21;
  // Clear space above and below a stack of labels between two ranks: a stack of `count` labels
  // needs labelGap(count) between the nodes, 100 (the rank separation) for four.
  const EDGE_LABEL_CLEAR = 8;
  const labelGap = (count) => count * EDGE_LABEL_STEP + 2 * EDGE_LABEL_CLEAR;

  // `text` on one line, cut to at most `max` characters (at a space when one is near) with "…".
  function shorten(text, max) {
    const line = String(text == null ? "" : text).replace(/\s+/g, " ").trim();
    if (line.length <= max) return line;
    const cut = line.slice(0, max - 1);
    const space = cut.lastIndexOf(" ");
    return (space > max / 2 ? cut.slice(0, space) : cut).replace(/[\s,.;:·–—-]+$/, "") + "…";
  }

  // Ids breadth first from `start`, following `next(id)`; ids that `known(id)` denies are
  // skipped. Then every id of `all` not reached, in its own order.
  function candidateOrder(start, next, known, all) {
    const seen = new Set();
    const queue = [start];
    for (let i = 0; i < queue.length; i++) {
      const id = queue[i];
      if (seen.has(id) || !known(id)) continue;
      seen.add(id);
      for (const target of next(id)) if (!seen.has(target)) queue.push(target);
    }
    for (const id of all) seen.add(id);
    return [...seen];
  }

  // The edges ({source, target}) that lead to an id later in `order`: the layered layout ranks by
  // these alone, so the picture keeps the candidate's order top to bottom (a strict order has no
  // cycle: nothing is reversed). Edges back to an earlier node are drawn, not ranked.
  function forwardEdges(order, edges) {
    const rank = new Map(order.map((id, i) => [id, i]));
    const at = (id) => (rank.has(id) ? rank.get(id) : order.length);
    return edges.filter((e) => at(e.target) > at(e.source));
  }

  // How far (in the picture's units, down positive) to move each edge's label from its curve's
  // middle so that the labels of the edges leaving one node form a stack: `edges` are
  // {id, source, y} (y: the middle of the curve, where the label sits unmoved), in the
  // document's order; each node's labels are placed EDGE_LABEL_STEP apart, in that order. The
  // stack is centred in the node's gap below when `gaps` (source → {top, bottom}, rankGaps) has
  // one, else on the mean of the curves' middles. Apart by a whole line, they never cover one
  // another, however the curves run (parallel curves to one node meet near the same middle).
  function edgeLabelOffsets(edges, gaps = new Map()) {
    const bySource = new Map();
    for (const e of edges) {
      if (!bySource.has(e.source)) bySource.set(e.source, []);
      bySource.get(e.source).push(e);
    }
    const offsets = new Map();
    for (const [source, group] of bySource) {
      const gap = gaps.get(source);
      const centre = gap ? (gap.top + gap.bottom) / 2 : group.reduce((sum, e) => sum + e.y, 0) / group.length;
      group.forEach((e, i) => offsets.set(e.id, centre + (i - (group.length - 1) / 2) * EDGE_LABEL_STEP - e.y));
    }
    return offsets;
  }

  // Where a curve runs across at height `y`: `from`, `control`, `to` ({x, y}) are a quadratic
  // Bézier's points (a straight edge's control point is its middle). Null where the curve does
  // not reach that height (such a label keeps its curve's middle across).
  function curveXAt(from, control, to, y) {
    const a = from.y - 2 * control.y + to.y;
    const b = 2 * (control.y - from.y);
    const c = from.y - y;
    const roots = [];
    if (Math.abs(a) < 1e-9) {
      if (Math.abs(b) > 1e-9) roots.push(-c / b);
    } else {
      const d = b * b - 4 * a * c;
      if (d >= 0) roots.push((-b - Math.sqrt(d)) / (2 * a), (-b + Math.sqrt(d)) / (2 * a));
    }
    const t = roots.find((r) => r >= -1e-9 && r <= 1 + 1e-9);
    if (t === undefined) return null;
    return (1 - t) * (1 - t) * from.x + 2 * (1 - t) * t * control.x + t * t * to.x;
  }

  // The free band below node `id` in `boxes` (id → {y1, y2}): from the lowest bottom of the
  // nodes beside it (its rank) to the top of the highest node wholly below it; null when no node
  // is below.
  function gapBelow(boxes, id) {
    const own = boxes.get(id);
    let bottom = Infinity;
    for (const b of boxes.values()) if (b.y1 > own.y2 && b.y1 < bottom) bottom = b.y1;
    if (bottom === Infinity) return null;
    let top = own.y2;
    for (const b of boxes.values()) if (b.y1 < bottom && b.y2 > top) top = b.y2;
    return { top, bottom };
  }

  // Room between two ranks for the stacked labels of the nodes above (after the layout): `nodes`
  // are {id, y1, y2} (their boxes), `stacks` {source, count} (how many labels each node stacks
  // in its gap below). Where a stack needs more than its gap (labelGap: more than four labels),
  // every node below the gap moves down by the difference, the rest of the picture keeps its
  // spacing. Returns {shifts: id → how far down, gaps: source → {top, bottom} after the moves}.
  function rankGaps(nodes, stacks) {
    const boxes = new Map(nodes.map((n) => [n.id, { y1: n.y1, y2: n.y2 }]));
    const shifts = new Map(nodes.map((n) => [n.id, 0]));
    const order = stacks.filter((s) => boxes.has(s.source)).sort((a, b) => boxes.get(a.source).y2 - boxes.get(b.source).y2);
    for (const s of order) {
      const gap = gapBelow(boxes, s.source);
      const short = gap ? labelGap(s.count) - (gap.bottom - gap.top) : 0;
      if (short <= 1) continue; // within a rounding of the layout's own spacing
      for (const [id, b] of boxes) {
        if (b.y1 < gap.bottom) continue;
        b.y1 += short;
        b.y2 += short;
        shifts.set(id, shifts.get(id) + short);
      }
    }
    const gaps = new Map();
    for (const s of stacks) {
      const gap = boxes.has(s.source) ? gapBelow(boxes, s.source) : null;
      if (gap) gaps.set(s.source, gap);
    }
    return { shifts, gaps };
  }

  const readable = (zoom) => zoom >= READABLE_ZOOM - 1e-9;

  // The zoom one step in (direction 1) or out (-1), between `min` and MAX_ZOOM. A step across
  // the readable zoom stops on it, so the smallest legible size is always one of the steps.
  function stepZoom(zoom, direction, min) {
    const next = direction > 0 ? zoom * ZOOM_STEP : zoom / ZOOM_STEP;
    const level = (zoom - READABLE_ZOOM) * (next - READABLE_ZOOM) < 0 ? READABLE_ZOOM : next;
    return Math.min(MAX_ZOOM, Math.max(Math.min(min, READABLE_ZOOM), level));
  }

  // The zoom at which `box` ({w, h}) fills a `view` ({width, height}) less `padding` around.
  function fitZoom(box, view, padding) {
    if (!(box.w > 0) || !(box.h > 0)) return MAX_ZOOM;
    return Math.min((view.width - 2 * padding) / box.w, (view.height - 2 * padding) / box.h);
  }

  // The readable view ({zoom, pan}) of a picture whose bounding box is `box` ({x1, y1, w, h}):
  // all of it when it fits at a legible size (never larger than 1.25), else the readable zoom with
  // `focus` ({x, y}, the selected or first node) a third down the view, never above the top,
  // centred across when the picture is narrow enough.
  function readableView(box, view, focus, padding = 16) {
    const whole = fitZoom(box, view, padding);
    const centre = (zoom) => ({ x: view.width / 2 - (box.x1 + box.w / 2) * zoom, y: view.height / 2 - (box.y1 + box.h / 2) * zoom });
    if (readable(whole)) {
      const zoom = Math.min(whole, 1.25);
      return { zoom, pan: centre(zoom) };
    }
    const zoom = READABLE_ZOOM;
    const at = focus || { x: box.x1 + box.w / 2, y: box.y1 };
    const narrow = box.w * zoom <= view.width - 2 * padding;
    const x = narrow ? centre(zoom).x : view.width / 2 - at.x * zoom;
    const y = Math.min(padding - box.y1 * zoom, view.height / 3 - at.y * zoom);
    return { zoom, pan: { x, y } };
  }

  return {
    LABEL_PX, READABLE_ZOOM, MAX_ZOOM, NODE_LABEL_CHARS, EDGE_LABEL_CHARS, EDGE_LABEL_STEP,
    labelGap, shorten, candidateOrder, forwardEdges, edgeLabelOffsets, curveXAt, rankGaps, readable, stepZoom,
    fitZoom, readableView,
  };
})();
if (typeof module === "object" && module.exports) module.exports = VivaFlowView;
else window.VivaFlowView = VivaFlowView;

(function () {
  "use strict";
  if (typeof document === "undefined") return;
  const view = VivaFlowView;
  const root = document.getElementById("studio");
  const flow = document.getElementById("flow");
  if (!root || !flow || !window.vivaStudio) return;
  const studio = window.vivaStudio;
  const graphBox = document.getElementById("flow-graph");
  const outline = document.getElementById("flow-outline");
  const formBox = document.getElementById("flow-form");
  const formHeading = document.getElementById("flow-form-heading");
  const announcer = document.getElementById("flow-status");
  const addKind = document.getElementById("flow-add-kind");
  const addId = document.getElementById("flow-add-id");
  const words = window.VivaStudioWords || null;
  // Translations: static/js/i18n.js (the page's JavaScript catalogue, English without it).
  const { gettext, ngettext, tf } = window.vivaI18n;
  const LANGUAGES = JSON.parse((document.getElementById("studio-languages") || {}).textContent || "[]");

  let schema = null;
  let doc = studio.document();
  let report = studio.report();
  let selection = null; // {type: "node"|"edge"|"pool"|"package"|"pools", id, edge?}
  let cy = null;
  let redrawTimer = null;
  let editing = false; // a form edit is being written back: do not rebuild the form under it
  let fieldNo = 0;

  // --- document helpers -----------------------------------------------------------------------

  const nodes = () => (doc && Array.isArray(doc.nodes) ? doc.nodes.filter((n) => n && typeof n === "object") : []);
  const pools = () => (doc && Array.isArray(doc.questionPools) ? doc.questionPools : []);
  const nodeIndex = (id) => (doc && Array.isArray(doc.nodes) ? doc.nodes.findIndex((n) => n && n.nodeId === id) : -1);
  const poolIndex = (id) => pools().findIndex((p) => p && p.poolId === id);
  const allIds = () => new Set([...nodes().map((n) => n.nodeId), ...pools().map((p) => p.poolId)]);

  // Write the document into the editor. A structural change (rebuild) redraws the picture,
  // the outline and the form at once; typing in a field (rebuild false) leaves the form alone.
  function write(message, rebuild = true) {
    editing = true;
    studio.setDocument(doc);
    editing = false;
    if (rebuild) {
      redraw();
      drawForm();
    }
    if (message) say(message);
  }

  function say(text) { announcer.textContent = text; }

  function uniqueId(base) {
    const taken = new Set([...allIds()]);
    for (const n of nodes()) for (const t of n.transitions || []) taken.add(t.id);
    for (const n of nodes()) for (const t of n.evidenceTargets || []) taken.add(t.id);
    let id = base;
    for (let i = 2; taken.has(id); i++) id = base + "-" + i;
    return id;
  }

  function conditionText(condition) {
    if (!condition || typeof condition !== "object") return "?";
    switch (condition.type) {
      case "always": return gettext("always");
      case "evidence_satisfied": return tf(gettext("evidence: %(targets)s"), { targets: (condition.targetIds || []).join(", ") });
      case "evidence_sufficient": return gettext("evidence sufficient");
      case "turn_count_reached": return tf(gettext("after %(count)s turns"), { count: condition.count });
      case "time_elapsed": return tf(gettext("after %(seconds)s s"), { seconds: condition.seconds });
      case "candidate_command": return tf(gettext("command: %(command)s"), { command: condition.command });
      case "policy_escalation": return tf(gettext("escalation: %(escalation)s"), { escalation: condition.escalation });
      default: return String(condition.type);
    }
  }

  // --- findings by place ----------------------------------------------------------------------

  function findings() {
    if (!report) return [];
    return [...(report.errors || []), ...(report.warnings || [])];
  }

  // "nodes[q1].transitions[0].condition" → {node: "q1", edge: 0}
  function placeOf(finding) {
    const path = finding.path || "";
    const m = path.match(/^nodes\[([^\]]+)\](?:\.transitions\[(\d+)\])?/);
    if (m) return { node: m[1], edge: m[2] === undefined ? null : Number(m[2]) };
    const p = path.match(/^questionPools\[([^\]]+)\]/);
    if (p) return { node: p[1], edge: null };
    return { node: finding.nodeId || null, edge: null };
  }

  function findingsAt(nodeId, edge) {
    return findings().filter((f) => {
      const place = placeOf(f);
      return place.node === nodeId && (edge === undefined || place.edge === edge);
    });
  }

  function countText(list) {
    const errors = list.filter((f) => f.severity === "error").length;
    const warnings = list.length - errors;
    const parts = [];
    if (errors) parts.push(tf(ngettext("%(n)s error", "%(n)s errors", errors), { n: errors }));
    if (warnings) parts.push(tf(ngettext("%(n)s warning", "%(n)s warnings", warnings), { n: warnings }));
    return parts.join(", ");
  }

  // --- the picture ----------------------------------------------------------------------------

  // A node's label: its title (or id) shortened to one line, its kind, its findings count. The
  // full text is the element's `full` (the tooltip) and the outline's entry.
  function nodeElement(n) {
    const list = findingsAt(n.nodeId);
    const errors = list.some((f) => f.severity === "error");
    const classes = ["kind-" + n.kind];
    if (doc.initialNodeId === n.nodeId) classes.push("initial");
    if (list.length) classes.push(errors ? "has-errors" : "has-warnings");
    const kind = n.kind + (n.kind === "end" && n.endType ? " · " + n.endType : "");
    const badge = list.length ? "  ⚠ " + list.length : "";
    const label = view.shorten(n.title || n.nodeId, view.NODE_LABEL_CHARS) + "\n" + kind + badge;
    const full = (n.title ? n.title + " · " : "") + n.nodeId + " · " + kind + (list.length ? " · " + countText(list) : "");
    return { data: { id: "n:" + n.nodeId, label, full }, classes: classes.join(" ") };
  }

  function poolElements(p, ids) {
    const count = (p.nodeIds || []).length;
    const label = view.shorten(tf(gettext("pool %(id)s"), { id: p.poolId }), view.NODE_LABEL_CHARS) + "\n" + tf(ngettext("%(n)s variant", "%(n)s variants", count), { n: count });
    const full = tf(gettext("question pool %(id)s: one of %(nodes)s"), { id: p.poolId, nodes: (p.nodeIds || []).join(", ") });
    const out = [{ data: { id: "n:" + p.poolId, label, full }, classes: "pool" + (findingsAt(p.poolId).length ? " has-errors" : "") }];
    for (const member of p.nodeIds || []) {
      if (ids.has(member)) out.push({ data: { id: "v:" + p.poolId + ":" + member, source: "n:" + p.poolId, target: "n:" + member, label: gettext("variant"), full: gettext("variant") }, classes: "variant" });
    }
    return out;
  }

  function transitionElement(n, t, index) {
    const list = findingsAt(n.nodeId, index);
    const text = conditionText(t.condition);
    return {
      data: { id: "e:" + n.nodeId + ":" + index, source: "n:" + n.nodeId, target: "n:" + t.targetNodeId, label: view.shorten(text, view.EDGE_LABEL_CHARS) + (list.length ? " ⚠" : ""), full: tf(gettext("→ %(target)s when %(condition)s · %(id)s"), { target: t.targetNodeId, condition: text, id: t.id }) },
      classes: list.length ? "has-errors" : "",
    };
  }

  function elements() {
    const out = nodes().map(nodeElement);
    const ids = allIds();
    for (const p of pools()) if (p && p.poolId) out.push(...poolElements(p, ids));
    for (const n of nodes()) {
      (n.transitions || []).forEach((t, index) => {
        if (t && ids.has(t.targetNodeId)) out.push(transitionElement(n, t, index));
      });
    }
    for (const el of out) if (el.data.source) Object.assign(el.data, { labelDx: 0, labelDy: 0 }); // placed after the layout
    return out;
  }

  // Labels are LABEL_PX in the picture's own units and legible (12 px on screen) from
  // view.READABLE_ZOOM up. Below it (the overview) they are hidden ("labels-hidden"), never
  // drawn illegibly small; the tooltip still names what is under the pointer.
  const LABEL_PX = view.LABEL_PX;
  const style = [
    { selector: "node", style: { shape: "round-rectangle", width: 170, height: 54, label: "data(label)", "text-wrap": "wrap", "text-max-width": 160, "text-valign": "center", "font-size": LABEL_PX, color: "#1b1f24", "background-color": "#e8eef7", "border-width": 2, "border-color": "#44546a" } },
    { selector: "node.kind-question", style: { "background-color": "#dbe9ff" } },
    { selector: "node.kind-scenario", style: { "background-color": "#e4f4e4" } },
    { selector: "node.kind-warmup, node.kind-wrapup", style: { "background-color": "#f3efe0" } },
    { selector: "node.kind-end", style: { shape: "ellipse", "background-color": "#eeeeee" } },
    { selector: "node.pool", style: { shape: "diamond", width: 150, height: 70, "background-color": "#fff3d6", "border-style": "dashed" } },
    { selector: "node.initial", style: { "border-width": 5, "border-style": "double", "border-color": "#0b5394" } },
    { selector: "node.has-warnings", style: { "border-color": "#8a5a00", "border-width": 4 } },
    { selector: "node.has-errors", style: { "border-color": "#b3261e", "border-width": 4 } },
    { selector: "node:selected", style: { "overlay-color": "#0b5394", "overlay-opacity": 0.18, "overlay-padding": 6 } },
    // Transition labels are horizontal (read without tilting the head) on an opaque, outlined
    // box; the labels of one node's transitions are stacked (labelDy, edgeLabelOffsets) so that
    // they never cover one another, also where parallel curves meet the same node, each on its
    // own curve (labelDx, curveXAt).
    { selector: "edge", style: { width: 2, "curve-style": "bezier", "target-arrow-shape": "triangle", "line-color": "#5b6b7f", "target-arrow-color": "#5b6b7f", label: "data(label)", "font-size": LABEL_PX, "text-background-color": "#ffffff", "text-background-opacity": 1, "text-background-padding": 1, "text-background-shape": "roundrectangle", "text-border-width": 1, "text-border-color": "#8a97a8", "text-border-opacity": 1, "text-rotation": "none", "text-margin-x": "data(labelDx)", "text-margin-y": "data(labelDy)", color: "#1b1f24" } },
    { selector: "edge.variant", style: { "line-style": "dashed", "line-color": "#a07400", "target-arrow-color": "#a07400" } },
    { selector: "edge.has-errors", style: { "line-color": "#b3261e", "target-arrow-color": "#b3261e" } },
    { selector: "edge:selected", style: { width: 4, "line-color": "#0b5394", "target-arrow-color": "#0b5394" } },
    { selector: ".labels-hidden", style: { label: "" } },
    // Drag to connect (cytoscape-edgehandles): the line being drawn and the node it would reach.
    { selector: ".eh-ghost-node", style: { width: 1, height: 1, opacity: 0, label: "" } },
    { selector: ".eh-ghost-edge, .eh-preview", style: { "text-margin-x": 0, "text-margin-y": 0, width: 3, "line-style": "dashed", "line-color": "#0b5394", "target-arrow-color": "#0b5394", label: "" } },
    { selector: "node.eh-target, node.eh-source", style: { "border-color": "#0b5394", "border-width": 5 } },
  ];

  let drawnKey = null; // what the current layout was computed for
  let labelsHidden = false;

  function createGraph() {
    const graph = window.VivaStudioGraph;
    cy = graph.cytoscape({ container: graphBox, style, boxSelectionEnabled: false, minZoom: 0.05, maxZoom: view.MAX_ZOOM });
    cy.on("tap", "node", (e) => select(targetOf(e.target.id())));
    cy.on("tap", "edge", (e) => select(targetOf(e.target.id())));
    cy.on("zoom", onZoom);
    cy.on("dragfree", "node", () => placeEdgeLabels());
    cy.on("mouseover", "node, edge", (e) => { graphBox.title = e.target.data("full") || ""; });
    cy.on("mouseout", "node, edge", () => graphBox.removeAttribute("title"));
    enableDragToConnect();
  }

  // The layout depends on the ids, the edges' ends and the start only: an edit of a title, a
  // condition or a finding relabels the elements in place and keeps the view.
  function structureKey(els) {
    return ((doc && doc.initialNodeId) || "") + "|" + els.map((e) => e.data.id + (e.data.source ? ">" + e.data.target : "")).join("|");
  }

  function drawGraph() {
    if (!window.VivaStudioGraph) return;
    const first = !cy;
    if (first) createGraph();
    const els = elements();
    const key = structureKey(els);
    const relaid = key !== drawnKey;
    if (relaid) layOut(els);
    else relabel(els);
    drawnKey = key;
    if (first) showReadable();
    onZoom();
    markSelection(relaid);
  }

  const classesOf = (el) => (el.classes || "") + (labelsHidden ? " labels-hidden" : "");

  function relabel(els) {
    cy.batch(() => {
      for (const el of els) {
        const element = cy.getElementById(el.data.id);
        element.data({ label: el.data.label, full: el.data.full });
        element.classes(classesOf(el));
      }
    });
  }

  const RANK_SEP = 100; // room for a transition's label (EDGE_LABEL_CHARS) between two ranks

  // Dagre, ranked by the edges that go forward in the candidate's order (nodes top to bottom as
  // the candidate meets them); the view (zoom and pan) is kept.
  function layOut(els) {
    cy.batch(() => {
      cy.elements().remove();
      cy.add(els.map((el) => ({ ...el, classes: classesOf(el) })));
    });
    const order = pictureOrder().map((id) => "n:" + id);
    const edges = cy.edges().map((e) => ({ id: e.id(), source: e.source().id(), target: e.target().id() }));
    const ranked = new Set(view.forwardEdges(order, edges).map((e) => e.id));
    const laidOut = cy.nodes().union(cy.edges().filter((e) => ranked.has(e.id())));
    laidOut.layout({ name: "dagre", rankDir: "TB", nodeSep: 40, rankSep: RANK_SEP, edgeSep: 20, fit: false, animate: false }).run();
    sinkUnreached(new Set(pictureOrder(true).map((id) => "n:" + id)));
    placeEdgeLabels(makeRoomForLabels());
  }

  const labelledEdges = () => cy.edges().filter((e) => !e.hasClass("eh-ghost-edge") && !e.hasClass("eh-preview"));
  const nodeBox = (n) => ({ id: n.id(), ...n.boundingBox({ includeLabels: false, includeOverlays: false, includeUnderlays: false }) });

  // Widen the gap below a node whose labels stack past it (view.rankGaps: more than four to the
  // next rank) by moving the nodes below down; the gaps where the stacks then go.
  function makeRoomForLabels() {
    const boxes = new Map(cy.nodes().map((n) => [n.id(), nodeBox(n)]));
    const counts = new Map();
    const below = new Set();
    labelledEdges().forEach((e) => {
      const source = e.source().id();
      counts.set(source, (counts.get(source) || 0) + 1);
      if (boxes.get(e.target().id()).y1 > boxes.get(source).y2) below.add(source);
    });
    const stacks = [...below].map((source) => ({ source, count: counts.get(source) }));
    const { shifts, gaps } = view.rankGaps([...boxes.values()], stacks);
    const moved = cy.nodes().filter((n) => shifts.get(n.id()) > 0);
    if (moved.length) moved.positions((n) => ({ x: n.position("x"), y: n.position("y") + shifts.get(n.id()) }));
    return gaps;
  }

  // Stack the labels of each node's transitions (view.edgeLabelOffsets) where the curves now run:
  // in the gaps below their nodes after a layout, around their curves' middles after a drag.
  // Each label sits on its own curve at its height in the stack (view.curveXAt), so a label moved
  // up or down the stack still reads as its curve's.
  function placeEdgeLabels(gaps) {
    const edges = labelledEdges();
    const offsets = view.edgeLabelOffsets(edges.map((e) => ({ id: e.id(), source: e.source().id(), y: e.midpoint().y })), gaps instanceof Map ? gaps : undefined);
    cy.batch(() => edges.forEach((e) => {
      const middle = e.midpoint();
      const dy = offsets.get(e.id());
      e.data({ labelDy: dy, labelDx: acrossOnCurve(e, middle, middle.y + dy) });
    }));
  }

  // How far across to move an edge's label from its curve's middle to where the curve runs at
  // height `y` (0 for a loop, or where the curve does not reach `y`).
  function acrossOnCurve(edge, middle, y) {
    const from = edge.sourceEndpoint();
    const to = edge.targetEndpoint();
    const controls = edge.controlPoints();
    if (edge.isLoop() || (controls && controls.length !== 1)) return 0;
    const control = controls ? controls[0] : { x: (from.x + to.x) / 2, y: (from.y + to.y) / 2 };
    const x = view.curveXAt(from, control, to, y);
    return x === null || !Number.isFinite(x) ? 0 : x - middle.x;
  }

  // Nodes the candidate cannot reach from the start (ends met through a policy, parts not yet
  // connected) go below the rest, centred, in their own arrangement: the picture reads top to
  // bottom in the candidate's order.
  function sinkUnreached(reached) {
    const rest = cy.nodes().filter((n) => reached.has(n.id()));
    const unreached = cy.nodes().filter((n) => !reached.has(n.id()));
    if (!rest.length || !unreached.length) return;
    const restBox = rest.boundingBox();
    const box = unreached.boundingBox();
    const dx = restBox.x1 + restBox.w / 2 - (box.x1 + box.w / 2);
    const dy = restBox.y2 + RANK_SEP - box.y1;
    unreached.positions((n) => ({ x: n.position("x") + dx, y: n.position("y") + dy }));
  }

  // The on-screen size of every label of the picture, in CSS pixels (for the browser tests).
  function labelSizes() {
    if (!cy) return [];
    return cy.elements().filter((e) => e.data("label")).map((e) => parseFloat(e.style("font-size")) * cy.zoom());
  }

  // Where the nodes' labels are drawn, in CSS pixels of the picture's box (for the browser tests).
  function labelBoxes() {
    if (!cy) return [];
    return cy.nodes().map((n) => ({ id: n.id(), ...n.renderedBoundingBox({ includeNodes: false, includeEdges: false, includeLabels: true, includeOverlays: false }) }));
  }

  function targetOf(elementId) {
    const [prefix, a, b] = elementId.split(":");
    if (prefix === "n") return poolIndex(a) >= 0 ? { type: "pool", id: a } : { type: "node", id: a };
    if (prefix === "e") return { type: "edge", id: a, edge: Number(b) };
    return { type: "pool", id: a };
  }

  function elementIdOf(sel) {
    if (!sel) return null;
    if (sel.type === "node" || sel.type === "pool") return "n:" + sel.id;
    if (sel.type === "edge") return "e:" + sel.id + ":" + sel.edge;
    return null;
  }

  // Which node this author has open (a node or one of its transitions), for the sign that tells
  // co-authors (studio-presence.js): window.vivaStudioNode, and a "studio:node" event on change.
  let announcedNode;
  function announceNode() {
    const nodeId = selection && (selection.type === "node" || selection.type === "edge") ? selection.id : null;
    if (nodeId === announcedNode) return;
    announcedNode = nodeId;
    window.vivaStudioNode = nodeId;
    document.dispatchEvent(new CustomEvent("studio:node", { detail: { nodeId } }));
  }

  function selectedElement() {
    const id = elementIdOf(selection);
    return id && cy ? cy.getElementById(id) : null;
  }

  // Mark the selected part. With `reveal` (a new selection, a new layout) bring it into view;
  // a part the author chose is shown at a legible zoom even from the overview.
  function markSelection(reveal = true, legible = false) {
    if (!cy) return;
    cy.elements().unselect();
    const chosen = selectedElement();
    if (!chosen || chosen.empty()) return;
    chosen.select();
    if (!reveal) return;
    const zoomIn = legible && !view.readable(cy.zoom());
    if (zoomIn) cy.zoom(view.READABLE_ZOOM);
    const seen = cy.extent();
    const box = chosen.boundingBox();
    const outside = box.x1 < seen.x1 || box.x2 > seen.x2 || box.y1 < seen.y1 || box.y2 > seen.y2;
    if (zoomIn || outside) cy.center(chosen);
  }

  // --- zooming: buttons, keys, the level shown --------------------------------------------------

  const zoomLevel = zoomControls();

  function zoomControls() {
    const bar = document.createElement("div");
    bar.className = "flow-zoom";
    bar.setAttribute("role", "group");
    bar.setAttribute("aria-label", gettext("Zoom the flow picture"));
    bar.hidden = !window.VivaStudioGraph;
    const button = (text, keys, action) => {
      const b = addButton(text, action);
      if (keys) b.setAttribute("aria-keyshortcuts", keys);
      return b;
    };
    const level = document.createElement("span");
    level.id = "flow-zoom-level";
    level.className = "hint";
    bar.append(
      button(gettext("Zoom out"), "-", () => zoomStep(-1)),
      button(gettext("Zoom in"), "+", () => zoomStep(1)),
      button(gettext("Fit, readable"), "0", () => { showReadable(); announceZoom(); }),
      button(gettext("Whole flow"), "", () => { showWhole(); announceZoom(); }),
      level,
    );
    graphBox.before(bar);
    return level;
  }

  const viewport = () => ({ width: graphBox.clientWidth, height: graphBox.clientHeight });

  // The smallest zoom: the whole flow in the box (the overview), or the readable zoom if larger.
  function overviewZoom() {
    return Math.min(view.READABLE_ZOOM, view.fitZoom(cy.elements().boundingBox(), viewport(), 16));
  }

  function zoomStep(direction) {
    if (!cy) return;
    const size = viewport();
    cy.zoom({ level: view.stepZoom(cy.zoom(), direction, overviewZoom()), renderedPosition: { x: size.width / 2, y: size.height / 2 } });
    announceZoom();
  }

  // Fit at a legible size: all of the flow when it fits, else from the selected (or first) node.
  function showReadable() {
    if (!cy || !cy.nodes().length) return;
    const chosen = selectedElement();
    const start = doc && cy.getElementById("n:" + doc.initialNodeId);
    const focus = chosen && chosen.nonempty() ? chosen : start && start.nonempty() ? start : null;
    const fit = view.readableView(cy.elements().boundingBox(), viewport(), focus ? midpoint(focus) : null);
    cy.viewport({ zoom: fit.zoom, pan: fit.pan });
  }

  function midpoint(element) {
    const box = element.boundingBox();
    return { x: box.x1 + box.w / 2, y: box.y1 + box.h / 2 };
  }

  // The overview: the whole flow in the box, labels hidden when that is below a legible size.
  function showWhole() {
    if (!cy || !cy.nodes().length) return;
    cy.fit(cy.elements(), 16);
    if (cy.zoom() > 1.25) cy.zoom({ level: 1.25, renderedPosition: { x: viewport().width / 2, y: viewport().height / 2 } });
  }

  function zoomText() {
    const level = Math.round(cy.zoom() * 100) + " %";
    return labelsHidden
      ? tf(gettext("Zoom %(level)s: labels hidden, zoom in to read them"), { level })
      : tf(gettext("Zoom %(level)s"), { level });
  }

  function announceZoom() { if (cy) say(zoomText() + "."); }

  // On every zoom (buttons, keys, wheel, pinch): labels hidden below a legible size, level shown.
  function onZoom() {
    const hide = !view.readable(cy.zoom());
    if (hide !== labelsHidden) {
      labelsHidden = hide;
      cy.batch(() => (hide ? cy.elements().addClass("labels-hidden") : cy.elements().removeClass("labels-hidden")));
    }
    zoomLevel.textContent = zoomText();
  }

  // Keys that zoom the picture: + (or =) in, - out, 0 fit at a legible size.
  function zoomKey(event) {
    const action = { "+": () => zoomStep(1), "=": () => zoomStep(1), "-": () => zoomStep(-1), "0": () => { showReadable(); announceZoom(); } }[event.key];
    if (!action || event.ctrlKey || event.metaKey || event.altKey) return false;
    event.preventDefault();
    action();
    return true;
  }

  // Keyboard on the picture: arrows walk the outline order, Enter/Space edits, zoom keys zoom.
  graphBox.addEventListener("keydown", (event) => {
    if (zoomKey(event)) return;
    const order = outlineOrder();
    if (!order.length) return;
    const at = Math.max(0, order.findIndex((s) => s.type === (selection && selection.type) && s.id === (selection && selection.id) && s.edge === (selection && selection.edge)));
    let next = null;
    if (event.key === "ArrowDown" || event.key === "ArrowRight") next = order[Math.min(order.length - 1, at + (selection ? 1 : 0))];
    else if (event.key === "ArrowUp" || event.key === "ArrowLeft") next = order[Math.max(0, at - 1)];
    else if (event.key === "Home") next = order[0];
    else if (event.key === "End") next = order[order.length - 1];
    else if ((event.key === "Enter" || event.key === " ") && selection) {
      event.preventDefault();
      const first = formBox.querySelector(".form-fields input, .form-fields select, .form-fields textarea");
      if (first) first.focus();
      return;
    } else return;
    event.preventDefault();
    select(next, { focusForm: false });
    say(tf(gettext("Selected %(part)s. Press Enter to edit it."), { part: describe(next) }));
  });

  // --- the outline (text alternative) --------------------------------------------------------

  // Node and pool ids in the order a candidate meets them (breadth first from the initial node,
  // a pool leading to its variants), then (unless `reachedOnly`) the rest in the document's order.
  function pictureOrder(reachedOnly = false) {
    const byId = new Map(nodes().map((n) => [n.nodeId, n]));
    const poolMembers = new Map(pools().filter((p) => p && p.poolId).map((p) => [p.poolId, p.nodeIds || []]));
    const next = (id) => poolMembers.get(id) || (byId.get(id).transitions || []).filter(Boolean).map((t) => t.targetNodeId);
    const known = (id) => byId.has(id) || poolMembers.has(id);
    const start = doc && byId.has(doc.initialNodeId) ? doc.initialNodeId : null;
    return view.candidateOrder(start, next, known, reachedOnly ? [] : [...byId.keys(), ...poolMembers.keys()]);
  }

  // Nodes in the order a candidate meets them, then the rest.
  function nodeOrder() {
    const byId = new Map(nodes().map((n) => [n.nodeId, n]));
    return pictureOrder().filter((id) => byId.has(id)).map((id) => byId.get(id));
  }

  function outlineOrder() {
    const out = [];
    for (const n of nodeOrder()) {
      out.push({ type: "node", id: n.nodeId });
      (n.transitions || []).forEach((t, i) => out.push({ type: "edge", id: n.nodeId, edge: i }));
    }
    for (const p of pools()) out.push({ type: "pool", id: p.poolId });
    return out;
  }

  function describe(sel) {
    if (!sel) return gettext("nothing");
    if (sel.type === "node") {
      const n = nodes().find((x) => x.nodeId === sel.id);
      if (!n) return sel.id;
      return n.title
        ? tf(gettext("%(kind)s node %(id)s (%(title)s)"), { kind: n.kind, id: n.nodeId, title: n.title })
        : tf(gettext("%(kind)s node %(id)s"), { kind: n.kind, id: n.nodeId });
    }
    if (sel.type === "edge") {
      const n = nodes().find((x) => x.nodeId === sel.id);
      const t = n && (n.transitions || [])[sel.edge];
      return t ? tf(gettext("transition %(id)s from %(from)s to %(to)s (%(condition)s)"), { id: t.id, from: sel.id, to: t.targetNodeId, condition: conditionText(t.condition) }) : gettext("transition");
    }
    if (sel.type === "pool") return tf(gettext("question pool %(id)s"), { id: sel.id });
    if (sel.type === "package") return gettext("package settings");
    return sel.type;
  }

  function outlineButton(text, sel, extra) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "link-button outline-item";
    button.textContent = text;
    if (extra) {
      const note = document.createElement("span");
      note.className = "outline-findings";
      note.textContent = " (" + extra + ")";
      button.append(note);
    }
    const current = selection && selection.type === sel.type && selection.id === sel.id && selection.edge === sel.edge;
    if (current) button.setAttribute("aria-current", "true");
    button.addEventListener("click", () => select(sel));
    return button;
  }

  function drawOutline() {
    announceNode();
    outline.replaceChildren();
    const list = document.createElement("ol");
    list.className = "flow-outline-list";
    for (const n of nodeOrder()) {
      const item = document.createElement("li");
      const initial = doc.initialNodeId === n.nodeId ? gettext("start") + " · " : "";
      const label = initial + n.kind + (n.kind === "end" && n.endType ? " (" + n.endType + ")" : "") + ": " + (n.title ? n.title + " · " : "") + n.nodeId;
      item.append(outlineButton(label, { type: "node", id: n.nodeId }, countText(findingsAt(n.nodeId, null))));
      const edges = document.createElement("ul");
      (n.transitions || []).forEach((t, i) => {
        if (!t) return;
        const li = document.createElement("li");
        li.append(outlineButton(tf(gettext("→ %(target)s when %(condition)s · %(id)s"), { target: t.targetNodeId, condition: conditionText(t.condition), id: t.id }), { type: "edge", id: n.nodeId, edge: i }, countText(findingsAt(n.nodeId, i))));
        edges.append(li);
      });
      if (edges.children.length) item.append(edges);
      list.append(item);
    }
    for (const p of pools()) {
      if (!p) continue;
      const item = document.createElement("li");
      item.append(outlineButton(tf(gettext("question pool %(id)s: one of %(nodes)s"), { id: p.poolId, nodes: (p.nodeIds || []).join(", ") }), { type: "pool", id: p.poolId }, countText(findingsAt(p.poolId))));
      list.append(item);
    }
    if (!list.children.length) {
      const empty = document.createElement("p");
      empty.textContent = gettext("No nodes yet. Add the first one above; it becomes the start of the exam.");
      outline.append(empty);
    } else outline.append(list);
  }

  // --- selection and the form -------------------------------------------------------------------

  function select(sel, options = {}) {
    flushPending();
    selection = sel;
    markSelection(true, true);
    drawOutline();
    drawForm();
    updateToolbar();
    if (options.focusForm) {
      const first = formBox.querySelector(".form-fields input, .form-fields select, .form-fields textarea");
      if (first) first.focus();
    }
  }

  function pathOfSelection() {
    if (!selection) return null;
    if (selection.type === "node") { const i = nodeIndex(selection.id); return i < 0 ? null : ["nodes", i]; }
    if (selection.type === "edge") {
      const i = nodeIndex(selection.id);
      if (i < 0 || !doc.nodes[i].transitions || !doc.nodes[i].transitions[selection.edge]) return null;
      return ["nodes", i, "transitions", selection.edge];
    }
    if (selection.type === "pool") { const i = poolIndex(selection.id); return i < 0 ? null : ["questionPools", i]; }
    if (selection.type === "package") return [];
    return null;
  }

  // The report's path syntax for a document path: nodes[<nodeId>]..., questionPools[<poolId>]...
  function reportPath(path) {
    let out = "";
    let container = doc;
    path.forEach((key, i) => {
      const value = container == null ? undefined : container[key];
      if (typeof key === "number") {
        const parentKey = path[i - 1];
        const label = parentKey === "nodes" && value && value.nodeId ? value.nodeId
          : parentKey === "questionPools" && value && value.poolId ? value.poolId : key;
        out += "[" + label + "]";
      } else out += (out ? "." : "") + key;
      container = value;
    });
    return out;
  }

  function getAt(path) { return path.reduce((v, k) => (v == null ? undefined : v[k]), doc); }

  function setAt(path, value) {
    if (!path.length) { doc = value; return; }
    let container = doc;
    for (const key of path.slice(0, -1)) container = container[key];
    const last = path[path.length - 1];
    if (value === undefined) {
      if (Array.isArray(container)) container.splice(last, 1); else delete container[last];
    } else container[last] = value;
  }

  function drawForm() {
    flushPending(); // what was typed goes into the document the form is drawn from
    formBox.replaceChildren();
    annotated = [];
    fieldNo = 0;
    const path = pathOfSelection();
    if (!schema || !doc || path === null) {
      formHeading.textContent = gettext("Edit");
      const hint = document.createElement("p");
      hint.className = "hint";
      hint.textContent = !schema ? gettext("Loading the package schema…") : !doc ? gettext("Fix the JSON syntax to use the forms.") : gettext("Select a node or a transition in the picture or the outline, or open the package settings.");
      formBox.append(hint);
      return;
    }
    formHeading.textContent = tf(gettext("Edit %(part)s"), { part: describe(selection) });
    const sub = selection.type === "node" ? defs("Node") : selection.type === "edge" ? defs("Transition") : selection.type === "pool" ? defs("QuestionPool") : schema;
    formBox.append(actionsFor(selection));
    const skip = selection.type === "package" ? ["nodes", "questionPools"] : selection.type === "node" ? skippedFor(getAt(path)) : [];
    const fields = field(sub, getAt(path), path, { label: null, required: true, skip });
    fields.classList.add("form-fields");
    formBox.append(fields);
    const box = findingsBox(path); // after the fields: it leaves out what they show
    if (box) formBox.prepend(box);
    focusAdded();
  }

  // After an "Add ..." button: focus moves to the first field of what it added (the button
  // itself is gone with the redrawn form).
  let focusAfterDraw = null;
  function focusAdded() {
    const wanted = focusAfterDraw;
    focusAfterDraw = null;
    if (!wanted) return;
    const key = JSON.stringify(wanted);
    const entry = annotated.find((e) => JSON.stringify(e.path.slice(0, wanted.length)) === key);
    if (entry) entry.input.focus();
  }

  // The findings of the selected part that no field of the form shows beside itself, listed
  // above the form (null when there are none): each finding is shown once.
  function findingsBox(path) {
    const besideFields = new Set(annotated.filter((e) => e.input.isConnected).map((e) => reportPath(e.path)));
    const here = findings().filter((f) => ((f.path || "").startsWith(reportPath(path)) || (selection.type === "node" && !f.path && f.nodeId === selection.id)) && !besideFields.has(f.path));
    if (!here.length) return null;
    const box = document.createElement("div");
    box.className = "form-findings";
    box.setAttribute("role", "group");
    box.setAttribute("aria-label", gettext("Findings here"));
    const list = document.createElement("ul");
    for (const f of here) {
      const li = document.createElement("li");
      li.className = "finding finding-" + f.severity;
      li.textContent = f.ruleId + " " + f.message;
      if (f.path) li.title = f.path; // the precise place, for integrators
      list.append(li);
    }
    box.append(list);
    return box;
  }

  // A new report on the form as it stands: the findings list and each field's findings are
  // replaced, the fields themselves (and what is typed in them) are left alone.
  function annotate() {
    const path = doc && schema ? pathOfSelection() : null;
    if (path === null || !annotated.length) { if (!formBox.contains(document.activeElement) && !pending.size) drawForm(); return; }
    formHeading.textContent = tf(gettext("Edit %(part)s"), { part: describe(selection) });
    const old = formBox.querySelector(":scope > .form-findings");
    const box = findingsBox(path);
    if (old && box) old.replaceWith(box);
    else if (old) old.remove();
    else if (box) formBox.prepend(box);
    for (const entry of annotated) if (entry.input.isConnected) markField(entry);
  }

  // What a node of this kind never carries (Node schema: end nodes have an endType and a closing,
  // and no transitions, evidence, follow-ups or budget); shown again if the document has it.
  const NOT_ON_END = ["evidenceTargets", "followUpPolicy", "completionPolicy", "timeBudget", "transitions", "recoveryHandlers", "allowedActions", "scenario"];
  function skippedFor(node) {
    if (!node || typeof node !== "object") return [];
    const unused = node.kind === "end" ? NOT_ON_END : ["endType"];
    return unused.filter((key) => node[key] == null || (Array.isArray(node[key]) && !node[key].length));
  }

  function defs(name) { return schema.$defs[name]; }

  function resolve(s) {
    let out = s || {};
    for (let i = 0; out.$ref && i < 10; i++) out = defs(out.$ref.split("/").pop()) || {};
    return out;
  }

  function optionalOf(s) {
    const options = s.anyOf || [];
    if (options.length === 2 && options.some((o) => o.type === "null")) return options.find((o) => o.type !== "null");
    return null;
  }

  function humanise(name) {
    return String(name).replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
  }

  const RUBRIC_LEVELS = ["excellent", "satisfactory", "partial", "absent"];

  // A new rubric level is named after its place ("Excellent", German "Ausgezeichnet"): the
  // author writes what an answer at that level contains and may rename it.
  function levelDefault(level) {
    return { label: (words && words.label("levels." + level)) || humanise(level), description: "" };
  }

  function defaultFor(s, name) {
    const r = resolve(s);
    const opt = optionalOf(r);
    if (opt) return defaultFor(opt, name);
    // "Add marking levels" gives all four levels at once (EVD-006 asks for each), their
    // descriptions to be written: four fields instead of four "Add" clicks and eight fields.
    if (r.properties && RUBRIC_LEVELS.every((level) => level in r.properties)) {
      return Object.fromEntries(RUBRIC_LEVELS.map((level) => [level, levelDefault(level)]));
    }
    if (RUBRIC_LEVELS.includes(name) && r.properties && "label" in r.properties && "description" in r.properties) {
      return levelDefault(name);
    }
    if (r.oneOf && r.discriminator) return defaultFor(r.oneOf[0], name);
    if (r.enum) return r.enum[0];
    if (r.const !== undefined) return r.const;
    if (r.type === "object" || r.properties) {
      const value = {};
      for (const key of r.required || []) value[key] = defaultFor(r.properties[key], key);
      return value;
    }
    if (r.type === "array") return [];
    if (r.type === "integer" || r.type === "number") return r.minimum !== undefined ? r.minimum : (r.exclusiveMinimum !== undefined ? r.exclusiveMinimum + 1 : 1);
    if (r.type === "boolean") return false;
    return "";
  }

  const LONG_TEXT = /seed|description|message|opening|closing|scenario|notes|justification|rationale|^text$|purpose/i;

  // An action on the document: pending typing first, then the change, computed from the
  // document as it is now when `value` is a function of the current value at `path`.
  function commit(path, value, message) {
    flushPending();
    if (!doc) return;
    setAt(path, typeof value === "function" ? value(getAt(path)) : value);
    write(message);
  }

  function fieldFindings(path) {
    const p = reportPath(path);
    return findings().filter((f) => f.path === p);
  }

  // The form's fields with their paths, so a new report annotates them in place.
  let annotated = [];

  function describeWith(input, path, help) {
    const entry = { input, path, hint: null, problem: null };
    if (help) {
      const hint = document.createElement("span");
      hint.className = "hint field-description";
      hint.id = "fh-" + (++fieldNo);
      hint.textContent = help;
      input.after(hint);
      entry.hint = hint;
    }
    annotated.push(entry);
    markField(entry);
  }

  // Show the findings at the field's path beside it; the field's value is never touched.
  function markField(entry) {
    const { input, hint } = entry;
    if (entry.problem) entry.problem.remove();
    entry.problem = null;
    const list = fieldFindings(entry.path);
    if (list.length) {
      const problem = document.createElement("span");
      problem.className = "field-finding";
      problem.id = "ff-" + (++fieldNo);
      problem.textContent = list.map((f) => f.ruleId + ": " + f.message).join(" ");
      input.setAttribute("aria-invalid", "true");
      (hint || input).after(problem);
      entry.problem = problem;
    } else input.removeAttribute("aria-invalid");
    const ids = [hint && hint.id, entry.problem && entry.problem.id].filter(Boolean);
    if (ids.length) input.setAttribute("aria-describedby", ids.join(" "));
    else input.removeAttribute("aria-describedby");
  }

  function field(s, value, path, opts) {
    const r = resolve(s);
    const name = opts.label;
    const opt = optionalOf(r);
    if (opt) {
      const inner = resolve(opt);
      if ((inner.type === "object" || inner.properties) && !opts.required) {
        // Named in the author's words (studio-words.js: "Add what the examiner says", German
        // "Was die Prüferin sagt hinzufügen"). Inside a list entry the buttons name it: several
        // entries may lack the same part.
        const label = nameOf(name, path);
        const part = inSentence(label);
        if (value === undefined || value === null) {
          const addText = opts.owner ? tf(gettext("Add %(part)s to %(owner)s"), { part, owner: opts.owner }) : tf(gettext("Add %(part)s"), { part });
          return addButton(addText, () => {
            focusAfterDraw = path;
            commit(path, defaultFor(inner), tf(gettext("%(part)s added."), { part: label }));
          });
        }
        const box = objectField(inner, value, path, name, opts);
        const removeText = opts.owner ? tf(gettext("Remove %(part)s of %(owner)s"), { part, owner: opts.owner }) : tf(gettext("Remove %(part)s"), { part });
        box.append(removeButton(removeText, () => commit(path, undefined, tf(gettext("%(part)s removed."), { part: label }))));
        return box;
      }
      return field(opt, value, path, { ...opts, required: false, description: opts.description || r.description });
    }
    if (r.oneOf && r.discriminator) return unionField(r, value, path, name);
    if (r.enum) return enumField(r, value, path, name, opts);
    if (r.type === "array") return arrayField(r, value, path, name, opts);
    if (r.type === "object" || r.properties) return objectField(r, value === undefined || value === null ? {} : value, path, name, opts);
    return primitiveField(r, value, path, name, opts);
  }

  // The key of a field for the plain words (static/js/studio-words.js): "<parent>.<name>".
  function wordKey(path) {
    const names = path.filter((k) => typeof k === "string");
    return names.slice(-2).join(".");
  }

  // The field's name in plain words: studio-words.js's label, else the humanised schema name.
  function nameOf(name, path) {
    return (words && words.label(wordKey(path))) || humanise(name);
  }

  // A choice's value in plain words (studio-words.js), else the humanised JSON value.
  function valueName(value) {
    return (words && words.value(value)) || humanise(value);
  }

  // One entry of a list by its number from 1 ("transition 2", "Übergang 2"): studio-words.js's
  // entry name, else the humanised singular of the list's name.
  function entryName(listName, number) {
    const entry = words && words.item(listName);
    return entry ? tf(entry, { id: number }) : singular(listName).toLowerCase() + " " + number;
  }

  // A label inside a sentence ("Time limit" -> "Add time limit"): its first letter in lower case,
  // except in German, whose nouns keep their capital ("Zeitlimit hinzufügen"), and for a word in
  // capitals ("LLM settings").
  function inSentence(text) {
    if ((document.documentElement.lang || "").toLowerCase().startsWith("de")) return text;
    if (text.length > 1 && text.charAt(1) !== text.charAt(1).toLowerCase()) return text;
    return text.charAt(0).toLowerCase() + text.slice(1);
  }

  // The first letter in upper case ("transition 2" -> "Transition 2" as a legend).
  function capitalised(text) {
    return text.charAt(0).toUpperCase() + text.slice(1);
  }

  // A field's label with the mark of a required field.
  function requiredLabel(text, required) {
    return required ? tf(gettext("%(label)s (required)"), { label: text }) : text;
  }

  // The help under a field is the lecturer's (studio-words.js), never the schema's description,
  // which speaks JSON (the JSON editor's hover shows that one).
  function wrap(labelText, input, path) {
    const help = words ? words.help(wordKey(path)) : null;
    const box = document.createElement("div");
    box.className = "form-field";
    const label = document.createElement("label");
    input.id = "f-" + (++fieldNo) + "-" + reportPath(path).replace(/[^a-zA-Z0-9_-]+/g, "-");
    label.htmlFor = input.id;
    label.textContent = labelText;
    box.append(label, input);
    describeWith(input, path, help);
    return box;
  }

  // Typing is written back after a short pause. Until then the field holds the only copy of
  // what was typed: pending edits (by path) are read from their fields when flushed, onto the
  // document as it is then, and flushed (never dropped) before any action, when the field loses
  // focus, and before the form is redrawn.
  let inputTimer = null;
  const pending = new Map();
  function flushPending() {
    clearTimeout(inputTimer);
    if (!pending.size || !doc) return;
    const edits = [...pending.values()];
    pending.clear();
    for (const edit of edits) {
      const value = edit.read();
      try {
        setAt(edit.path, value === undefined && edit.required ? "" : value);
      } catch (e) { /* the part it belonged to is gone from the document */ }
    }
    write(null, false);
  }
  function onInput(path, read, required) {
    const key = JSON.stringify(path);
    return () => {
      pending.set(key, { path, read, required });
      studio.editing();
      clearTimeout(inputTimer);
      inputTimer = setTimeout(flushPending, 250);
    };
  }
  formBox.addEventListener("focusout", flushPending);
  studio.onFlush(flushPending);

  // Fields whose values are ids of the package: offered as choices, so nobody types an id.
  function choicesFor(path) {
    const last = path[path.length - 1];
    const nodeAt = path[0] === "nodes" && typeof path[1] === "number" ? (doc.nodes || [])[path[1]] : null;
    const targetIds = nodeAt ? (nodeAt.evidenceTargets || []).map((t) => t && t.id).filter(Boolean) : [];
    if (path.length === 1 && last === "initialNodeId") return nodes().filter((n) => n.kind !== "end").map((n) => n.nodeId);
    if (last === "targetNodeId" && nodeAt) return [...allIds()].filter((id) => id !== nodeAt.nodeId);
    if (path[0] === "questionPools" && last === "nodeIds") return nodes().filter((n) => n.kind !== "end").map((n) => n.nodeId);
    if (nodeAt && (last === "targetIds" || last === "requiredEvidenceTargetIds" || last === "requiredEvidence")) return targetIds;
    if (path.length === 2 && path[0] === "metadata" && last === "language") return LANGUAGES.map(([code]) => code);
    if (nodeAt && last === "markingCriteria") return outcomes().map((o) => o.id);
    return null;
  }

  function outcomes() {
    const list = doc && doc.metadata && Array.isArray(doc.metadata.learningOutcomes) ? doc.metadata.learningOutcomes : [];
    return list.filter((o) => o && typeof o.id === "string" && o.id);
  }

  // How a choice is shown: a language by its name, a learning outcome with its text.
  function choiceLabel(path, value) {
    const last = path[path.length - 1];
    if (last === "language") {
      const known = LANGUAGES.find(([code]) => code === value);
      return known ? known[1] : value;
    }
    if (last === "markingCriteria") {
      const outcome = outcomes().find((o) => o.id === value);
      return outcome && outcome.text ? value + ": " + outcome.text : value;
    }
    return value;
  }

  function choiceField(choices, value, path, name, opts) {
    const select = document.createElement("select");
    if (!opts.required) select.append(new Option(gettext("(not set)"), ""));
    const options = value && !choices.includes(value) ? [value, ...choices] : choices;
    if (opts.required && !value) select.append(new Option(gettext("(choose)"), ""));
    for (const option of options) select.append(new Option(choiceLabel(path, option), option));
    select.value = value || "";
    select.addEventListener("change", () => commit(path, select.value === "" ? (opts.required ? "" : undefined) : select.value));
    return wrap(requiredLabel(nameOf(name, path), opts.required), select, path);
  }

  function checkboxes(options, items, path, name, opts, raw = false) {
    const box = fieldset(nameOf(name, path));
    if (!options.length) {
      const none = document.createElement("p");
      none.className = "hint";
      none.textContent = gettext("Nothing to choose from yet.");
      box.append(none);
    }
    for (const option of options) {
      const id = "f-" + (++fieldNo);
      const check = document.createElement("input");
      check.type = "checkbox";
      check.id = id;
      check.checked = items.includes(option);
      check.addEventListener("change", () => {
        commit(path, (now) => {
          const current = Array.isArray(now) ? now : [];
          const next = options.filter((o) => (o === option ? check.checked : current.includes(o)));
          return next.length || opts.required ? next : undefined;
        });
      });
      const label = document.createElement("label");
      label.htmlFor = id;
      label.className = "check-label";
      label.textContent = raw ? choiceLabel(path, option) : valueName(option);
      const row = document.createElement("div");
      row.className = "check-row";
      row.append(check, label);
      box.append(row);
    }
    return box;
  }

  function primitiveField(r, value, path, name, opts) {
    const choices = r.type === "string" ? choicesFor(path) : null;
    if (choices) return choiceField(choices, value, path, name, { ...opts, description: opts.description || r.description });
    let input;
    if (r.type === "boolean") {
      input = document.createElement("input");
      input.type = "checkbox";
      input.checked = Boolean(value);
      input.addEventListener("change", () => commit(path, input.checked));
      return wrap(nameOf(name, path), input, path);
    }
    const numeric = r.type === "integer" || r.type === "number";
    if (!numeric && (LONG_TEXT.test(name) || (r.maxLength || 0) > 300)) {
      input = document.createElement("textarea");
      input.rows = 3;
    } else {
      input = document.createElement("input");
      input.type = numeric ? "number" : "text";
      if (numeric) input.step = r.type === "integer" ? "1" : "any";
    }
    input.value = value === undefined || value === null ? "" : String(value);
    if (opts.required) input.required = true;
    const read = () => {
      const text = input.value;
      if (text.trim() === "") return opts.required && !numeric ? "" : undefined;
      if (numeric) { const n = Number(text); return Number.isFinite(n) ? n : text; }
      return text;
    };
    input.addEventListener("input", onInput(path, read, opts.required && !numeric));
    return wrap(requiredLabel(nameOf(name, path), opts.required), input, path);
  }

  function enumField(r, value, path, name, opts) {
    const select = document.createElement("select");
    if (!opts.required) select.append(new Option(gettext("(not set)"), ""));
    for (const option of r.enum) select.append(new Option(valueName(option), option));
    select.value = value === undefined || value === null ? "" : String(value);
    select.addEventListener("change", () => commit(path, select.value === "" ? undefined : select.value));
    return wrap(requiredLabel(nameOf(name, path), opts.required), select, path);
  }

  function fieldset(legendText) {
    const box = document.createElement("fieldset");
    box.className = "form-group";
    if (legendText) {
      const legend = document.createElement("legend");
      legend.textContent = legendText;
      box.append(legend);
    }
    return box;
  }

  function objectField(r, value, path, name, opts) {
    // A list entry's name ("Evidence target 1: t1") is its own; a field's is its label.
    const box = name === null ? document.createElement("div") : fieldset(typeof path[path.length - 1] === "string" ? nameOf(name, path) : name);
    const props = r.properties || {};
    const required = new Set(r.required || []);
    const order = [...(r.required || []), ...Object.keys(props).filter((k) => !required.has(k))];
    for (const key of order) {
      const sub = props[key];
      if (!sub || sub.deprecated || key === "extensions" || (opts.skip || []).includes(key)) continue;
      box.append(field(sub, value[key], [...path, key], { label: key, required: required.has(key), description: sub.description, owner: opts.owner }));
    }
    return box;
  }

  function unionField(r, value, path, name) {
    const box = fieldset(nameOf(name, path));
    const mapping = r.discriminator.mapping;
    const key = r.discriminator.propertyName;
    const current = value && value[key];
    const select = document.createElement("select");
    for (const option of Object.keys(mapping)) select.append(new Option(valueName(option), option));
    select.value = current || "";
    select.addEventListener("change", () => commit(path, defaultFor({ $ref: mapping[select.value] }), tf(gettext("%(part)s is now %(value)s."), { part: nameOf(name, path), value: valueName(select.value) })));
    box.append(wrap(nameOf(key, [...path, key]), select, [...path, key]));
    if (current && mapping[current]) {
      const chosen = resolve({ $ref: mapping[current] });
      const rest = { ...chosen, properties: { ...chosen.properties }, required: (chosen.required || []).filter((k) => k !== key) };
      delete rest.properties[key];
      box.append(objectField(rest, value, path, null, {}));
    }
    return box;
  }

  function arrayField(r, value, path, name, opts) {
    const items = Array.isArray(value) ? value : [];
    const itemSchema = resolve(r.items);
    if (itemSchema.enum) return checkboxes(itemSchema.enum, items, path, name, opts);
    const idChoices = itemSchema.type === "string" ? choicesFor(path) : null;
    if (idChoices) return checkboxes([...new Set([...idChoices, ...items])], items, path, name, opts, true);
    if (itemSchema.type === "string" || itemSchema.type === "integer" || itemSchema.type === "number") {
      const input = document.createElement("textarea");
      input.rows = Math.max(2, items.length + 1);
      input.value = items.join("\n");
      const numeric = itemSchema.type !== "string";
      const read = () => {
        const lines = input.value.split("\n").map((l) => l.trim()).filter(Boolean).map((l) => (numeric ? Number(l) : l));
        return lines.length || opts.required ? lines : undefined;
      };
      input.addEventListener("input", onInput(path, read));
      return wrap(tf(gettext("%(label)s (one per line)"), { label: nameOf(name, path) }), input, path);
    }
    const box = fieldset(nameOf(name, path) + " (" + items.length + ")");
    items.forEach((item, index) => {
      const label = item && (item.id || item.nodeId || item.poolId || item.scenario || item.command);
      // Named in the author's words (studio-words.js ITEMS): "Transition 2: t2", "Remove transition 2".
      const entryText = entryName(name, index + 1);
      const owner = label || entryText;
      const entry = objectField(itemSchema.oneOf ? r.items : itemSchema, item || {}, [...path, index], capitalised(entryText) + (label ? ": " + label : ""), { owner });
      entry.append(removeButton(tf(gettext("Remove %(part)s"), { part: entryText }), () => commit([...path, index], undefined, tf(gettext("%(part)s removed."), { part: capitalised(entryText) }))));
      box.append(entry);
    });
    const addText = (words && words.add(name)) || tf(gettext("Add %(part)s"), { part: singular(name).toLowerCase() });
    box.append(addButton(addText, () => {
      flushPending();
      const now = getAt(path);
      const index = Array.isArray(now) ? now.length : 0;
      focusAfterDraw = [...path, index]; // the new entry's first field
      commit(path, (now) => [...(Array.isArray(now) ? now : []), newItem(itemSchema, name)], tf(gettext("%(part)s added."), { part: capitalised(entryName(name, index + 1)) }));
    }));
    return box;
  }

  function singular(name) {
    const text = humanise(name);
    return text.endsWith("ies") ? text.slice(0, -3) + "y" : text.endsWith("s") ? text.slice(0, -1) : text;
  }

  function newItem(itemSchema, name) {
    const item = defaultFor(itemSchema, name);
    if (name === "evidenceTargets") item.id = uniqueId((selection && selection.id ? selection.id : "target") + "-target");
    if (name === "transitions") item.id = uniqueId((selection && selection.id) + "-next");
    if (name === "learningOutcomes") item.id = nextOutcomeId();
    return item;
  }

  // LO1, LO2, ...: one more than the highest number in use.
  function nextOutcomeId() {
    const numbers = outcomes().map((o) => /^LO(\d+)$/i.exec(o.id)).filter(Boolean).map((m) => Number(m[1]));
    const taken = new Set(outcomes().map((o) => o.id));
    let n = Math.max(outcomes().length, ...numbers) + 1;
    while (taken.has("LO" + n)) n++;
    return "LO" + n;
  }

  function addButton(text, action) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "secondary";
    button.textContent = text;
    button.addEventListener("click", action);
    return button;
  }

  function removeButton(text, action) {
    const button = addButton(text, action);
    button.className = "link-button danger";
    return button;
  }

  // --- graph actions: add, remove, connect, start here ---------------------------------------

  function actionsFor(sel) {
    const bar = document.createElement("div");
    bar.className = "form-actions";
    if (sel.type === "node") {
      const n = nodes().find((x) => x.nodeId === sel.id);
      if (n && n.kind !== "end" && doc.initialNodeId !== n.nodeId) bar.append(addButton(gettext("Start the exam here"), () => { flushPending(); doc.initialNodeId = n.nodeId; write(tf(gettext("%(id)s is now the first node."), { id: n.nodeId })); }));
      if (n && n.kind !== "end") {
        const select = document.createElement("select");
        for (const id of allIds()) if (id !== n.nodeId) select.append(new Option(id, id));
        const wrapBox = wrap(gettext("Connect to"), select, ["nodes", nodeIndex(n.nodeId), "transitions"]);
        wrapBox.classList.add("inline-field");
        // Named after the chosen target: the transitions list below has its own "Add transition".
        const connectButton = addButton("", () => connect(n.nodeId, select.value));
        const nameConnect = () => { connectButton.textContent = tf(gettext("Add a transition to %(target)s"), { target: select.value || "…" }); };
        select.addEventListener("change", nameConnect);
        nameConnect();
        bar.append(wrapBox, connectButton);
      }
      bar.append(removeButton(tf(gettext("Delete node %(id)s"), { id: sel.id }), () => removeNode(sel.id)));
    } else if (sel.type === "edge") {
      bar.append(removeButton(gettext("Delete this transition"), () => {
        flushPending();
        doc.nodes[nodeIndex(sel.id)].transitions.splice(sel.edge, 1);
        selection = { type: "node", id: sel.id };
        write(gettext("Transition deleted."));
      }));
    } else if (sel.type === "pool") {
      bar.append(removeButton(tf(gettext("Delete pool %(id)s"), { id: sel.id }), () => {
        flushPending();
        doc.questionPools.splice(poolIndex(sel.id), 1);
        selection = null;
        write(gettext("Pool deleted."));
      }));
    }
    return bar;
  }

  function connect(nodeId, target) {
    if (!target) return;
    flushPending();
    const n = nodes().find((x) => x.nodeId === nodeId); // the document now, not when drawn
    if (!n) return;
    n.transitions = n.transitions || [];
    const id = uniqueId(n.nodeId + "-to-" + target);
    n.transitions.push({ id, targetNodeId: target, condition: { type: "always" } });
    selection = { type: "edge", id: n.nodeId, edge: n.transitions.length - 1 };
    write(tf(gettext("Transition %(id)s added from %(from)s to %(to)s."), { id, from: n.nodeId, to: target }));
  }

  // --- drag to connect (cytoscape-edgehandles; the form's "Connect to" is the keyboard way) ---

  // The document ids of a drag's ends when the drag may add a transition: from a node that is not
  // an end to another node or a pool; null otherwise (a pool's variants are listed in its form).
  function dragEnds(source, target) {
    const id = (element) => (element && element.nonempty() && element.id().startsWith("n:") ? element.id().slice(2) : null);
    const from = id(source);
    const to = id(target);
    const node = from && nodes().find((n) => n.nodeId === from);
    if (!node || node.kind === "end" || !to || to === from || !allIds().has(to)) return null;
    return { from, to };
  }

  // Dragging from a node draws a line; released on another node it adds a transition through
  // connect(), the toolbar's own path (validated, autosaved, undoable). Nodes are placed by the
  // layout, so a drag from a node never moves it; the background still pans.
  function enableDragToConnect() {
    if (typeof cy.edgehandles !== "function") return;
    const handles = cy.edgehandles({ canConnect: (source, target) => dragEnds(source, target) !== null, edgeParams: () => ({}), snap: true, snapThreshold: 8, hoverDelay: 0 });
    handles.enableDrawMode();
    cy.on("ehpreviewon", (event, source, target) => {
      const ends = dragEnds(source, target);
      if (ends) say(tf(gettext("Release to add a transition from %(from)s to %(to)s."), ends));
    });
    cy.on("ehcomplete", (event, source, target, added) => {
      const ends = dragEnds(source, target);
      added.remove();
      if (ends) connect(ends.from, ends.to);
    });
  }

  function removeNode(id) {
    flushPending();
    doc.nodes.splice(nodeIndex(id), 1);
    for (const n of nodes()) if (Array.isArray(n.transitions)) n.transitions = n.transitions.filter((t) => !t || t.targetNodeId !== id);
    for (const p of pools()) if (Array.isArray(p.nodeIds)) p.nodeIds = p.nodeIds.filter((m) => m !== id);
    if (doc.initialNodeId === id) doc.initialNodeId = "";
    selection = null;
    write(tf(gettext("Node %(id)s deleted, with the transitions into it."), { id }));
  }

  // What a new question or scenario starts with: the policies the validator asks every
  // question for (follow-ups, candidate commands, forbidden reveals, a re-ask on an unreliable
  // transcript), so the author starts from a sound node and edits it in the form.
  const QUESTION_POLICIES = () => ({
    followUpPolicy: { maxFollowUps: 2, maxFollowUpDurationSec: 90, followUpStyle: "probing" },
    candidateCommands: { allowed: ["repeat", "clarification", "request_rephrase", "pause", "thinking_aloud"] },
    forbiddenActions: ["reveal_answer", "reveal_rubric"],
    recoveryHandlers: [{ scenario: "stt_low_confidence", action: "gentle_reprompt", maxAttempts: 2, escalation: "pause_session" }],
  });

  const NEW_NODE = {
    question: (id) => ({ nodeId: id, kind: "question", title: "New question", promptSeed: "Ask the candidate to explain …", prompt: { opening: "" }, evidenceTargets: [], ...QUESTION_POLICIES(), timeBudget: { maxDurationSec: 300 }, transitions: [] }),
    scenario: (id) => ({ nodeId: id, kind: "scenario", title: "New scenario", promptSeed: "Present the scenario and ask …", scenario: "", prompt: { opening: "" }, evidenceTargets: [], ...QUESTION_POLICIES(), timeBudget: { maxDurationSec: 300 }, transitions: [] }),
    warmup: (id) => ({ nodeId: id, kind: "warmup", title: "Welcome", promptSeed: "Welcome the candidate and check the audio.", prompt: { opening: "" }, candidateCommands: { allowed: ["repeat", "clarification", "pause"] }, timeBudget: { maxDurationSec: 90 }, transitions: [] }),
    wrapup: (id) => ({ nodeId: id, kind: "wrapup", title: "Wrap-up", promptSeed: "Ask whether the candidate wants to add anything, then close.", prompt: { opening: "" }, candidateCommands: { allowed: ["repeat", "clarification", "pause"] }, timeBudget: { maxDurationSec: 120 }, transitions: [] }),
    end: (id) => ({ nodeId: id, kind: "end", endType: "normal", promptSeed: "Thank the candidate and close the examination.", prompt: { closing: "Thank you. That concludes the examination." }, transitions: [] }),
  };

  function addNode() {
    flushPending();
    if (!doc) { say(gettext("Fix the JSON syntax first.")); return; }
    const kind = addKind.value;
    const wanted = addId.value.trim().replace(/[^a-zA-Z0-9_-]+/g, "-") || kind;
    const id = uniqueId(wanted);
    if (!Array.isArray(doc.nodes)) doc.nodes = [];
    const node = (NEW_NODE[kind] || NEW_NODE.question)(id);
    // A question's (or scenario's) opening is the question itself: its field is there to be
    // written at once (a finding until it is). Other kinds' empty prompt parts go: their
    // examiner opens them from the instructions.
    const keeps = kind === "question" || kind === "scenario" ? ["opening"] : [];
    for (const key of Object.keys(node.prompt || {})) if (node.prompt[key] === "" && !keeps.includes(key)) delete node.prompt[key];
    if (node.prompt && !Object.keys(node.prompt).length) delete node.prompt;
    doc.nodes.push(node);
    if (!doc.initialNodeId && kind !== "end") doc.initialNodeId = id;
    const from = selection && selection.type === "node" ? nodes().find((n) => n.nodeId === selection.id) : null;
    if (from && from.kind !== "end" && document.getElementById("flow-add-connect").checked) {
      from.transitions = from.transitions || [];
      from.transitions.push({ id: uniqueId(from.nodeId + "-to-" + id), targetNodeId: id, condition: { type: "always" } });
    }
    selection = { type: "node", id };
    addId.value = "";
    write(tf(doc.initialNodeId === id ? gettext("%(kind)s node %(id)s added as the first node.") : gettext("%(kind)s node %(id)s added."), { kind, id }));
  }

  function addPool() {
    flushPending();
    if (!doc) return;
    if (!Array.isArray(doc.questionPools)) doc.questionPools = [];
    const id = uniqueId("pool");
    doc.questionPools.push({ poolId: id, nodeIds: [], selection: "random_one" });
    selection = { type: "pool", id };
    write(tf(gettext("Question pool %(id)s added: list its nodes in the form."), { id }));
  }

  function updateToolbar() {
    const connectBox = document.getElementById("flow-add-connect");
    const fromNode = selection && selection.type === "node";
    connectBox.disabled = !fromNode;
    document.getElementById("flow-add-connect-label").textContent = fromNode ? tf(gettext("and connect %(id)s to it"), { id: selection.id }) : gettext("and connect the selected node to it");
  }

  // The dry run of what is in the editor (saved or not): the highlights here, the full report
  // on the publish page.
  async function dryRun() {
    const button = document.getElementById("flow-dry-run");
    const box = document.getElementById("flow-dry-run-result");
    flushPending();
    if (!doc) { say(gettext("Fix the JSON syntax first.")); return; }
    button.disabled = true;
    say(gettext("Running the simulated candidates…"));
    let response;
    try {
      response = await fetch(button.dataset.url, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": root.querySelector("input[name=csrfmiddlewaretoken]").value },
        body: JSON.stringify({ document: doc }),
      });
    } catch (e) {
      button.disabled = false;
      say(gettext("The server could not be reached; try again."));
      return;
    }
    const data = await response.json().catch(() => null);
    button.disabled = false;
    box.replaceChildren();
    box.hidden = false;
    const heading = document.createElement("h3");
    const list = document.createElement("ul");
    const line = (text) => { const li = document.createElement("li"); li.textContent = text; list.append(li); };
    if (!response.ok) {
      heading.textContent = gettext("Dry run not possible");
      line((data && data.error && data.error.message) || tf(gettext("The dry run failed (%(status)s)."), { status: response.status }));
    } else {
      const none = gettext("none");
      heading.textContent = tf(gettext("Dry run: %(count)s simulated candidates"), { count: data.runCount });
      line(tf(gettext("Never reached: %(ids)s"), { ids: data.neverReached.join(", ") || none }));
      line(tf(gettext("Transitions never fired: %(ids)s"), { ids: data.neverFired.join(", ") || none }));
      line(tf(gettext("Dead ends: %(ids)s"), { ids: data.deadEnds.map((d) => d.nodeId + " (" + d.persona + ")").join(", ") || none }));
      for (const node of data.nodes) {
        if (node.forcedExits) line(tf(gettext("%(node)s: %(exits)s forced exit(s) of %(visits)s visits"), { node: node.nodeId, exits: node.forcedExits, visits: node.reached }));
      }
      for (const target of data.targets) {
        if (target.reached) line(tf(gettext("%(target)s: evidence from %(covered)s of %(reached)s"), { target: target.targetId, covered: target.covered, reached: target.reached }));
      }
    }
    box.append(heading, list);
    say(heading.textContent + ".");
  }

  document.getElementById("flow-dry-run").addEventListener("click", dryRun);
  document.getElementById("flow-add").addEventListener("click", addNode);
  document.getElementById("flow-add-pool").addEventListener("click", addPool);
  document.getElementById("flow-package").addEventListener("click", () => select({ type: "package", id: "package" }, { focusForm: true }));

  // --- keeping in step with the editor --------------------------------------------------------

  function redraw() {
    if (doc && selection && pathOfSelection() === null) selection = null;
    drawGraph();
    drawOutline();
    updateToolbar();
  }

  // Changes since the last redraw: the document edited elsewhere (the JSON editor) and/or a new
  // report. A report alone (a validation reply) only annotates the form.
  let editedElsewhere = false;
  let reportArrived = false;
  root.addEventListener("studio:changed", (event) => {
    const fresh = event.detail.document;
    const reportChanged = event.detail.report !== report;
    report = event.detail.report;
    if (fresh) doc = fresh;
    else if (!reportChanged) { doc = null; }
    // The editor's text lacks what is still pending in the form; it is written onto this
    // document when flushed (the fields hold it until then).
    if (!editing && !reportChanged) editedElsewhere = true;
    if (reportChanged) reportArrived = true;
    clearTimeout(redrawTimer);
    redrawTimer = setTimeout(() => {
      redraw();
      const busy = formBox.contains(document.activeElement) || pending.size > 0;
      if (editedElsewhere && !busy) drawForm();
      else if (editedElsewhere || reportArrived) annotate();
      editedElsewhere = false;
      reportArrived = false;
    }, 150);
  });

  fetch(root.dataset.schemaUrl, { headers: { Accept: "application/json" } })
    .then((r) => (r.ok ? r.json() : Promise.reject(new Error(String(r.status)))))
    .then((s) => { schema = s; drawForm(); })
    .catch(() => { formBox.textContent = gettext("The package schema could not be loaded; the forms are unavailable. The JSON editor still works."); });

  if (!window.VivaStudioGraph) graphBox.hidden = true;
  redraw();
  drawForm();
  // cy: the Cytoscape instance, for the browser tests to measure through its public API.
  window.vivaStudio.flow = { select, selection: () => selection, labelSizes, labelBoxes, zoom: () => (cy ? cy.zoom() : null), cy: () => cy };
})();
