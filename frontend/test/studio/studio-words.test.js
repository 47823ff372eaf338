// static/js/studio-words.js: every field of the package schema has a label in plain words, and
// every list an entry name, so the studio's forms and a finding's place never fall back to the
// humanised JSON name (which is English in every language). A new schema field without a label
// fails here. The schema is the committed export, docs/spec/package.schema.json (kept equal to
// the models by `python -m ioa.schema.export --check`); the forms read the same from the API.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const words = require("../../../static/js/studio-words.js");
const schema = JSON.parse(
  readFileSync(new URL("../../../docs/spec/package.schema.json", import.meta.url), "utf-8"),
);

function resolve(s) {
  let out = s || {};
  for (let i = 0; out.$ref && i < 10; i++) out = schema.$defs[out.$ref.split("/").pop()] || {};
  return out;
}

// Every field as the forms see it: its key (the forms' "<parent>.<field>", the parent being the
// nearest named part above it: list entries and union variants count as their list or field),
// its name, and whether it holds a list. Deprecated fields and extensions are included: the
// forms hide them, but a finding's place may name them.
function fields() {
  const out = new Map();
  const seen = new Set();
  function walk(s, parent) {
    const r = resolve(s);
    for (const option of [...(r.anyOf || []), ...(r.oneOf || [])]) walk(option, parent);
    if (r.type === "array" && r.items) walk(r.items, parent);
    for (const [name, sub] of Object.entries(r.properties || {})) {
      const key = parent ? parent + "." + name : name;
      const inner = resolve(sub);
      const isList = inner.type === "array" || (inner.anyOf || []).some((o) => resolve(o).type === "array");
      out.set(key, { name, isList });
      if (seen.has(key)) continue;
      seen.add(key);
      walk(sub, name);
    }
  }
  walk(schema, null);
  return out;
}

const humanise = (name) =>
  String(name).replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());

test("the walk finds the schema's fields", () => {
  const keys = [...fields().keys()];
  for (const key of ["nodes", "followUpPolicy.maxFollowUps", "evidenceTargets.id", "condition.targetIds", "excellent.label"]) {
    assert.ok(keys.includes(key), key);
  }
  // Every property of every definition is reached.
  const names = new Set([...fields().values()].map((f) => f.name));
  for (const def of Object.values(schema.$defs)) {
    for (const name of Object.keys(def.properties || {})) assert.ok(names.has(name), name);
  }
});

test("every field of the schema has a label", () => {
  const missing = [...fields().keys()].filter((key) => !words.label(key));
  assert.deepEqual(missing, [], "add these to LABELS in static/js/studio-words.js");
});

test("labels are plain words, not JSON names", () => {
  for (const [key, { name }] of fields()) {
    const label = words.label(key);
    assert.doesNotMatch(label, /\b[a-z]+[A-Z][a-zA-Z]*\b|[{}[\]_]/, key);
    // One word may be its own plain name ("Title", "Weight"); a name of several words is not.
    if (humanise(name).includes(" ")) assert.notEqual(label, humanise(name), key);
  }
});

test("names shared by different fields get the label of the field they are", () => {
  assert.equal(words.label("learningOutcomes.id"), "Code");
  assert.equal(words.label("transitions.id"), "Short name");
  assert.equal(words.label("recoveryHandlers.scenario"), "Problem");
  assert.equal(words.label("nodes.scenario"), "Situation for the candidate");
  assert.equal(words.label("condition.command"), "Candidate's request");
  assert.equal(words.label("forbidden.command"), "Request");
});

test("every list has a name for one of its entries, with an %(id)s placeholder", () => {
  const lists = [...fields().values()].filter((f) => f.isList).map((f) => f.name);
  assert.ok(lists.includes("nodes") && lists.includes("evidenceTargets"));
  for (const name of lists) {
    const entry = words.item(name);
    assert.ok(entry, "add " + name + " to ITEMS in static/js/studio-words.js");
    assert.match(entry, /%\(id\)s/, name);
  }
});

test("no table entry names a field the schema does not have", () => {
  const keys = fields();
  const names = new Set([...keys.values()].map((f) => f.name));
  const known = (key) => keys.has(key) || names.has(key) || /^(levels|excellent|satisfactory|partial|absent)\.(label|description)$/.test(key);
  for (const table of [words.LABELS, words.HELP, words.ITEMS]) {
    assert.deepEqual(Object.keys(table).filter((key) => !known(key)), []);
  }
});

test("the words come from the catalogue the page gives", () => {
  const german = { "Maximum number of follow-up questions": "Höchstzahl der Nachfragen", "node %(id)s": "Knoten %(id)s" };
  const saved = globalThis.self;
  globalThis.self = { gettext: (text) => german[text] || text };
  const path = require.resolve("../../../static/js/studio-words.js");
  const source = readFileSync(path, "utf-8");
  try {
    // As in the page: no CommonJS module, the object is set on the window.
    new Function("module", source)(undefined);
    const inPage = globalThis.self.VivaStudioWords;
    assert.equal(inPage.label("followUpPolicy.maxFollowUps"), "Höchstzahl der Nachfragen");
    assert.equal(inPage.item("nodes"), "Knoten %(id)s");
    assert.equal(inPage.label("unknownField"), null);
  } finally {
    if (saved === undefined) delete globalThis.self;
    else globalThis.self = saved;
  }
});
