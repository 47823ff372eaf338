// Every string of static/js/studio-words.js's tables (field labels, help, list entry names, the
// choices' words, the lists' "Add ..." buttons) has a German and a Spanish translation in the
// page's JavaScript catalogue (locale/<lang>/LC_MESSAGES/djangojs.po; compiled to .mo by
// `python -m config.messages`, which tests/config/test_translations.py checks), not fuzzy, with
// the English placeholders (issue #34). A label added without translations fails here instead of
// showing English on a German author's page.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { test } from "node:test";

const require = createRequire(import.meta.url);
const words = require("../../../static/js/studio-words.js");

// msgid -> {msgstr, fuzzy} of a .po file (singular entries; plural ones are not in the tables).
function readPo(language) {
  const text = readFileSync(new URL(`../../../locale/${language}/LC_MESSAGES/djangojs.po`, import.meta.url), "utf-8");
  const unquote = (line) => JSON.parse(line.trim().replace(/^(msgid|msgstr)\s+/, ""));
  const out = new Map();
  for (const block of text.split(/\n\s*\n/)) {
    const lines = block.split("\n").filter((l) => l.trim() && !l.startsWith("#~"));
    const fuzzy = lines.some((l) => l.startsWith("#,") && l.includes("fuzzy"));
    const parts = { msgid: null, msgstr: null };
    let current = null;
    for (const line of lines) {
      if (line.startsWith("#")) continue;
      const m = /^(msgid|msgstr)\s/.exec(line);
      if (m) { current = m[1]; parts[current] = unquote(line); }
      else if (line.startsWith('"') && current) parts[current] += JSON.parse(line.trim());
      else current = null; // msgid_plural, msgctxt: not ours
    }
    if (parts.msgid) out.set(parts.msgid, { msgstr: parts.msgstr, fuzzy });
  }
  return out;
}

const PLACEHOLDER = /%\(\w+\)s/g;

const tables = { LABELS: words.LABELS, HELP: words.HELP, ITEMS: words.ITEMS, VALUES: words.VALUES, ADD: words.ADD };

for (const language of ["de", "es"]) {
  test(`every studio word has a ${language} translation`, () => {
    const po = readPo(language);
    assert.ok(po.size > 300, "the catalogue is read");
    const missing = [];
    for (const [table, entries] of Object.entries(tables)) {
      for (const english of Object.values(entries)) {
        const entry = po.get(english);
        if (!entry || !entry.msgstr || entry.fuzzy) missing.push(`${table}: ${english}`);
        else assert.deepEqual((entry.msgstr.match(PLACEHOLDER) || []).sort(), (english.match(PLACEHOLDER) || []).sort(), english);
      }
    }
    assert.deepEqual(missing, [], `translate these in locale/${language}/LC_MESSAGES/djangojs.po`);
  });
}

test("the choices' words are translated, not copied", () => {
  for (const language of ["de", "es"]) {
    const po = readPo(language);
    for (const english of [...Object.values(words.VALUES), ...Object.values(words.ADD)]) {
      assert.notEqual(po.get(english).msgstr, english, `${language}: ${english}`);
    }
  }
});
