// The studio's JSON editor: CodeMirror 6 with JSON syntax, JSON.parse lint, JSON-Schema-driven
// completion and hover (codemirror-json-schema), schema lint (./schema-lint.js) and the server's
// validation findings shown as lint diagnostics at their paths (./json-path.js).
//
// Built by frontend/build.mjs into static/vendor/studio-editor.js, which defines the global
// `VivaStudioEditor` ({create, locatePath, parsePath}). static/js/studio.js drives it.

import {
  autocompletion,
  closeBrackets,
  closeBracketsKeymap,
  completionKeymap,
} from "@codemirror/autocomplete";
import { defaultKeymap, history, historyKeymap, indentWithTab } from "@codemirror/commands";
import { json, jsonLanguage, jsonParseLinter } from "@codemirror/lang-json";
import {
  bracketMatching,
  foldGutter,
  foldKeymap,
  HighlightStyle,
  indentOnInput,
  syntaxHighlighting,
} from "@codemirror/language";
import { forEachDiagnostic, lintGutter, lintKeymap, linter } from "@codemirror/lint";
import { highlightSelectionMatches, searchKeymap } from "@codemirror/search";
import { EditorSelection, EditorState, StateEffect, StateField } from "@codemirror/state";
import {
  drawSelection,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  hoverTooltip,
  keymap,
  lineNumbers,
} from "@codemirror/view";
import { tags } from "@lezer/highlight";
import { disableErrorLogging } from "best-effort-json-parser";
import {
  getJSONSchema,
  handleRefresh,
  schemaStateField,
  jsonCompletion,
  stateExtensions,
  updateSchema,
} from "codemirror-json-schema";

import { locatePath, parsePath } from "./json-path.js";
import { fieldHelp, schemaHover } from "./schema-help.js";
import { schemaLinter } from "./schema-lint.js";

// Colours chosen for at least 4.5:1 contrast on white and on the active-line background.
const highlightStyle = HighlightStyle.define([
  { tag: tags.propertyName, color: "#0b4f8a" },
  { tag: tags.string, color: "#8a1f11" },
  { tag: tags.number, color: "#1a6b33" },
  { tag: [tags.bool, tags.null], color: "#6f2da8", fontWeight: "600" },
  { tag: tags.invalid, color: "#b3261e", textDecoration: "underline" },
]);

// codemirror-json-schema reads half-typed JSON with best-effort-json-parser for completion, which
// would otherwise log every incomplete document to the console as an error.
disableErrorLogging();

// The CSP nonce of the page, from this bundle's own <script nonce="…"> (read while it runs: the
// attribute is hidden from the DOM afterwards, the property is not).
const pageNonce =
  (typeof document !== "undefined" && document.currentScript && document.currentScript.nonce) || "";

/**
 * codemirror-json-schema's completion source, answering "no completion" (null) where the library
 * answers with something that is no completion result: before the package schema has arrived it
 * returns [] and CodeMirror throws ("result.options is not iterable") at the author's first
 * keystroke (seen in CI on a loaded machine: the schema request was still on its way).
 */
function schemaCompletion() {
  const complete = jsonCompletion();
  return (context) => {
    const result = complete(context);
    return result && Array.isArray(result.options) ? result : null;
  };
}

// --- Server findings as diagnostics -------------------------------------------------------------

const setReport = StateEffect.define();

/** The last server validation report ({errors, warnings, info}), or null. */
const reportField = StateField.define({
  create: () => null,
  update(report, tr) {
    for (const effect of tr.effects) if (effect.is(setReport)) return effect.value;
    return report;
  },
});

const SEVERITY = { errors: "error", warnings: "warning", info: "info" };

function serverDiagnostics(view) {
  const report = view.state.field(reportField);
  if (!report) return [];
  const out = [];
  for (const [list, severity] of Object.entries(SEVERITY)) {
    for (const finding of report[list] || []) {
      const place = locatePath(view.state, finding.path || "$");
      if (!place) continue;
      const where = place.found ? "" : ` (at ${finding.path}, not found: shown at the closest place)`;
      out.push({
        from: place.from,
        to: Math.max(place.to, place.from),
        severity,
        source: "Server validation",
        message: `${finding.ruleId}: ${finding.message}${where}`,
        markClass: "cm-server-finding",
      });
    }
  }
  return out;
}

// --- The editor ---------------------------------------------------------------------------------

/**
 * Create the editor in `parent`.
 * options: doc, labelledBy / label (accessible name: ids, or text), describedBy (ids), id,
 * nonce (CSP; defaults to this script's nonce attribute), onChange(text),
 * onCursor({line, column, pos}, help) where help is fieldHelp's answer for the cursor.
 * Returns a controller: {view, getText(), setReport(report), setSchema(schema), revealPath(path),
 * locate(path), cursor(), fieldHelp(), focus(), diagnostics()}.
 */
export function create(parent, options = {}) {
  // tabindex: contenteditable is focusable anyway, but axe (scrollable-region-focusable) wants it said.
  const contentAttributes = { "aria-multiline": "true", tabindex: "0" };
  if (options.labelledBy) contentAttributes["aria-labelledby"] = options.labelledBy;
  if (options.label) contentAttributes["aria-label"] = options.label;
  if (options.describedBy) contentAttributes["aria-describedby"] = options.describedBy;
  if (options.id) contentAttributes.id = options.id;

  const cursorOf = (state) => {
    const head = state.selection.main.head;
    const line = state.doc.lineAt(head);
    return { line: line.number, column: head - line.from + 1, pos: head };
  };
  // The field at the cursor: the token the selection starts with, else the token just before the
  // cursor, else the one after it.
  const helpAt = (state) => {
    const range = state.selection.main;
    if (!range.empty) return fieldHelp(state, getJSONSchema(state), range.from, 1);
    const before = range.head > 0 ? state.sliceDoc(range.head - 1, range.head) : "";
    const side = /^[\s{}[\],:]?$/.test(before) ? 1 : -1;
    return fieldHelp(state, getJSONSchema(state), range.head, side);
  };

  const extensions = [
    lineNumbers(),
    highlightActiveLineGutter(),
    highlightSpecialChars(),
    history(),
    foldGutter(),
    drawSelection(),
    indentOnInput(),
    syntaxHighlighting(highlightStyle),
    bracketMatching(),
    closeBrackets(),
    autocompletion(),
    highlightActiveLine(),
    highlightSelectionMatches(),
    lintGutter(),
    keymap.of([
      ...closeBracketsKeymap,
      ...defaultKeymap,
      ...searchKeymap,
      ...historyKeymap,
      ...foldKeymap,
      ...completionKeymap,
      ...lintKeymap,
      // Tab indents; Esc then Tab (or Ctrl-M / Shift-Alt-M on macOS) moves focus instead.
      indentWithTab,
    ]),
    EditorState.tabSize.of(2),
    EditorView.contentAttributes.of(contentAttributes),
    // JSON syntax, plus a diagnostic where JSON.parse fails.
    json(),
    linter(jsonParseLinter(), { delay: 300 }),
    // The package schema: completion (Ctrl-Space), hover descriptions and schema lint.
    stateExtensions(undefined),
    jsonLanguage.data.of({ autocomplete: schemaCompletion() }),
    hoverTooltip(schemaHover(getJSONSchema)),
    linter(schemaLinter, { delay: 300, needsRefresh: handleRefresh }),
    // The server's findings, placed at their paths.
    reportField,
    linter(serverDiagnostics, {
      delay: 100,
      needsRefresh: (update) =>
        update.startState.field(reportField) !== update.state.field(reportField),
    }),
    EditorView.updateListener.of((update) => {
      if (update.docChanged && options.onChange) options.onChange(update.state.doc.toString());
      const schemaChanged = update.startState.field(schemaStateField) !== update.state.field(schemaStateField);
      if ((update.selectionSet || update.docChanged || schemaChanged) && options.onCursor) {
        options.onCursor(cursorOf(update.state), helpAt(update.state));
      }
    }),
  ];
  // CodeMirror writes its styles into a <style> element: with `style-src 'self' 'nonce-…'` it
  // must carry the page's nonce.
  const nonce = options.nonce ?? pageNonce;
  if (nonce) extensions.push(EditorView.cspNonce.of(nonce));

  const view = new EditorView({
    parent,
    state: EditorState.create({ doc: options.doc || "", extensions }),
  });

  return {
    view,
    getText: () => view.state.doc.toString(),
    setReport(report) {
      view.dispatch({ effects: setReport.of(report || null) });
    },
    setSchema(schema) {
      updateSchema(view, schema);
    },
    cursor: () => cursorOf(view.state),
    /** What the schema says about the field at the cursor: {name, type, description} or null. */
    fieldHelp: () => helpAt(view.state),
    focus: () => view.focus(),
    locate: (path) => locatePath(view.state, path),
    /** Move the cursor to `path`, scroll it into view and focus the editor. */
    revealPath(path) {
      const place = locatePath(view.state, path);
      if (!place) {
        view.focus();
        return null;
      }
      const { anchor, head } = place.cursor;
      view.dispatch({
        selection: EditorSelection.single(anchor, head),
        effects: EditorView.scrollIntoView(anchor, { y: "center" }),
        userEvent: "select",
      });
      view.focus();
      return { ...place, ...cursorOf(view.state) };
    },
    /** Current diagnostics (all sources) as plain objects, for tests and status messages. */
    diagnostics() {
      const found = [];
      forEachDiagnostic(view.state, (d, from, to) =>
        found.push({ from, to, severity: d.severity, message: d.message, source: d.source }),
      );
      return found;
    },
  };
}

export { appendRich } from "./schema-help.js";
export { locatePath, parsePath };
