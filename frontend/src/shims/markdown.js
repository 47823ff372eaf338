// Replaces codemirror-json-schema's utils/markdown.js in the bundle (see build.mjs).
// The original renders schema descriptions with markdown-it and loads the shiki highlighter
// (WebAssembly, dozens of grammars) at start-up: far too heavy for descriptions that are plain
// sentences with ``code`` spans, and WebAssembly would need a looser CSP.
// The callers assign the result to innerHTML, and error messages quote the user's own keys, so
// everything is escaped first; only backtick code spans and paragraphs become markup.

const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

function inline(text) {
  // ``code`` (reStructuredText style, as in the package schema) and `code` (Markdown).
  return escapeHtml(text).replace(/``([^`]+)``|`([^`]+)`/g, (_, a, b) => `<code>${a ?? b}</code>`);
}

export function renderMarkdown(markdown, isInline = true) {
  const text = markdown == null ? "" : String(markdown);
  if (isInline) return inline(text);
  return text
    .split(/\n\s*\n/)
    .map((para) => para.trim())
    .filter(Boolean)
    .map((para) => `<p>${inline(para).replace(/\n/g, "<br>")}</p>`)
    .join("");
}
