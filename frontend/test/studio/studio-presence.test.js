// static/js/studio-presence.js: the words of the sign that someone else has the draft open.
import assert from "node:assert/strict";
import { createRequire } from "node:module";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const { presenceSentence } = require("../../../static/js/studio-presence.js");

const seen = "2026-12-05T10:00:00Z";

test("nobody else: no sign", () => {
  assert.equal(presenceSentence([]), "");
  assert.equal(presenceSentence(undefined), "");
});

test("one other person is named", () => {
  assert.equal(
    presenceSentence([{ name: "Maria Lopez", lastSeen: seen }]),
    "Maria Lopez is also editing this package",
  );
});

test("more people: the most recent one is named, the others counted", () => {
  const others = [{ name: "Maria Lopez", lastSeen: seen }, { name: "Lena", lastSeen: seen }];
  assert.equal(presenceSentence(others), "Maria Lopez and 1 other are also editing this package");
  others.push({ name: "Tom", lastSeen: seen });
  assert.equal(presenceSentence(others), "Maria Lopez and 2 others are also editing this package");
});

test("the words come from the catalogue it is given", () => {
  const german = {
    gettext: (text) => ({ "%(name)s is also editing this package": "%(name)s bearbeitet dieses Paket auch" })[text],
    ngettext: (one, many, n) => (n === 1 ? "%(name)s und %(n)s weitere Person" : "%(name)s und %(n)s weitere Personen"),
    interpolate: (text, values) => text.replace(/%\((\w+)\)s/g, (_, key) => String(values[key])),
  };
  assert.equal(presenceSentence([{ name: "Lena" }], german), "Lena bearbeitet dieses Paket auch");
  assert.equal(presenceSentence([{ name: "Lena" }, { name: "Tom" }, { name: "Ana" }], german), "Lena und 2 weitere Personen");
});

test("the node the other person has open is named, and said when it is mine too", () => {
  const lena = { name: "Lena Berg", lastSeen: seen, nodeId: "q-dijkstra" };
  assert.equal(presenceSentence([lena]), "Lena Berg is also editing this package, in node q-dijkstra");
  assert.equal(presenceSentence([lena], undefined, "warmup"), "Lena Berg is also editing this package, in node q-dijkstra");
  assert.equal(presenceSentence([lena], undefined, "q-dijkstra"), "Lena Berg is also editing this node (q-dijkstra)");
  assert.equal(presenceSentence([{ ...lena, nodeId: null }], undefined, "q-dijkstra"), "Lena Berg is also editing this package");
  assert.equal(
    presenceSentence([lena, { name: "Tom", lastSeen: seen, nodeId: null }], undefined, "q-dijkstra"),
    "Lena Berg and 1 other are also editing this package",
  );
});
