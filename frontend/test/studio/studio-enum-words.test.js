// static/js/studio-words.js: every choice the forms offer has plain words (issue #34). A select
// or a box to tick shows a value of the package schema: every string enum value (a node's kind,
// a recovery rule's problem, a request the candidate may make, ...) and every kind of transition
// condition (the condition's discriminator) has a label a lecturer understands, never the
// humanised JSON value ("Stt low confidence"); every list of parts has its "Add ..." button.
// A new value in docs/spec/package.schema.json without words fails here (as a new field does in
// studio-words.test.js).
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const words = require("../../../static/js/studio-words.js");
const schema = JSON.parse(
  readFileSync(new URL("../../../docs/spec/package.schema.json", import.meta.url), "utf-8"),
);

const humanise = (name) =>
  String(name).replace(/([a-z])([A-Z])/g, "$1 $2").replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());

function resolve(s) {
  let out = s || {};
  for (let i = 0; out.$ref && i < 10; i++) out = schema.$defs[out.$ref.split("/").pop()] || {};
  return out;
}

// Every string enum value anywhere in the schema, and every discriminator value (the forms'
// union select offers the mapping's keys).
function choices() {
  const out = new Set();
  (function walk(node) {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== "object") return;
    if (Array.isArray(node.enum)) for (const v of node.enum) if (typeof v === "string") out.add(v);
    if (node.discriminator && node.discriminator.mapping) for (const v of Object.keys(node.discriminator.mapping)) out.add(v);
    Object.values(node).forEach(walk);
  })(schema);
  return out;
}

// The lists whose entries are parts (objects): the forms give them "Add ..." and "Remove ..." buttons.
function listsOfParts() {
  const out = new Set();
  const seen = new Set();
  (function walk(s, name) {
    const r = resolve(s);
    for (const option of [...(r.anyOf || []), ...(r.oneOf || [])]) walk(option, name);
    if (r.type === "array" && r.items) {
      const item = resolve(r.items);
      if (item.properties || item.oneOf) out.add(name);
      walk(r.items, name);
    }
    for (const [key, sub] of Object.entries(r.properties || {})) {
      if (seen.has(name + "." + key)) continue;
      seen.add(name + "." + key);
      walk(sub, key);
    }
  })(schema, null);
  return out;
}

test("the walk finds the schema's 74 enum values and the condition kinds", () => {
  const all = choices();
  for (const v of ["stt_low_confidence", "semi-structured", "random_one", "gentle_reprompt", "identity_check", "evidence_satisfied", "always"]) {
    assert.ok(all.has(v), v);
  }
  const enumValues = new Set();
  for (const def of Object.values(schema.$defs)) for (const v of def.enum || []) if (typeof v === "string") enumValues.add(v);
  assert.equal(enumValues.size, 74);
  for (const v of enumValues) assert.ok(all.has(v), v);
});

test("every choice of the schema has plain words", () => {
  const missing = [...choices()].filter((v) => !words.value(v));
  assert.deepEqual(missing, [], "add these to VALUES in static/js/studio-words.js");
});

test("a choice's words are not its humanised JSON value", () => {
  for (const v of choices()) {
    const label = words.value(v);
    assert.notEqual(label.toLowerCase(), humanise(v).toLowerCase(), v);
    assert.notEqual(label.toLowerCase(), v.toLowerCase(), v);
    assert.doesNotMatch(label, /\b[a-z]+[A-Z][a-zA-Z]*\b|[{}[\]_]/, v);
  }
  assert.equal(words.value("stt_low_confidence"), "Speech not recognised clearly");
  assert.equal(words.value("gentle_reprompt"), "Gently ask again");
});

test("choices of one select have different words", () => {
  const selects = Object.values(schema.$defs).filter((d) => Array.isArray(d.enum)).map((d) => d.enum);
  (function walk(node) {
    if (Array.isArray(node)) return node.forEach(walk);
    if (!node || typeof node !== "object") return;
    if (node.discriminator && node.discriminator.mapping) selects.push(Object.keys(node.discriminator.mapping));
    Object.values(node).forEach(walk);
  })(schema);
  for (const options of selects) {
    const labels = options.map((v) => words.value(v));
    assert.equal(new Set(labels).size, labels.length, options.join(", "));
  }
});

test("every list of parts has an Add button and an entry name in words", () => {
  const lists = listsOfParts();
  for (const name of ["nodes", "transitions", "evidenceTargets", "recoveryHandlers", "forbidden"]) assert.ok(lists.has(name), name);
  for (const name of lists) {
    const add = words.add(name);
    assert.ok(add, "add " + name + " to ADD in static/js/studio-words.js");
    assert.match(add, /^Add [a-z]/, name);
    assert.match(words.item(name), /%\(id\)s/, name);
  }
  assert.deepEqual(Object.keys(words.ADD).filter((name) => !lists.has(name)), []);
  assert.deepEqual(Object.keys(words.VALUES).filter((v) => !choices().has(v)), []);
});
