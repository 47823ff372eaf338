// What the package schema says about the field at a position: for the hover tooltip and the
// "field help" line under the editor (which keyboard users get by moving the cursor).
//
// codemirror-json-schema's hover does not look through `anyOf: [{$ref}, {type: "null"}]` (how
// pydantic writes optional fields, i.e. most of the package schema), so it mostly answered
// "object". This walks the raw schema itself: $ref, optional unions, discriminated unions.

import { jsonPointerForPosition } from "codemirror-json-schema";

function pointerGet(root, ref) {
  if (typeof ref !== "string" || !ref.startsWith("#")) return null;
  let node = root;
  for (const raw of ref.slice(1).split("/").slice(1)) {
    const part = raw.replace(/~1/g, "/").replace(/~0/g, "~");
    if (node == null || typeof node !== "object") return null;
    node = node[part];
  }
  return node ?? null;
}

function deref(root, schema) {
  let s = schema;
  for (let guard = 0; s && typeof s === "object" && s.$ref && guard < 32; guard += 1) {
    const target = pointerGet(root, s.$ref);
    if (!target) return s;
    const { $ref, ...rest } = s;
    s = { ...target, ...rest };
  }
  return s;
}

const isNull = (s) => s && s.type === "null";

/** Pick the branch of a union that applies to `value` (undefined: not known). */
function resolve(root, schema, value) {
  let s = deref(root, schema);
  for (let guard = 0; s && guard < 8; guard += 1) {
    const union = s.anyOf || s.oneOf;
    if (!Array.isArray(union)) return s;
    let candidates = union.map((b) => deref(root, b)).filter(Boolean);
    if (value !== null) candidates = candidates.filter((b) => !isNull(b));
    const key = s.discriminator && s.discriminator.propertyName;
    if (value && typeof value === "object" && !Array.isArray(value)) {
      const tagged = candidates.filter((b) =>
        Object.entries(b.properties || {}).some(([k, p]) => p && p.const !== undefined && p.const === value[k] && (!key || k === key)),
      );
      if (tagged.length) candidates = tagged;
    }
    if (candidates.length !== 1) {
      const { anyOf, oneOf, ...rest } = s;
      return { ...rest, union: candidates };
    }
    const { anyOf, oneOf, ...outer } = s;
    s = { ...candidates[0], ...Object.fromEntries(Object.entries(outer).filter(([, v]) => v !== undefined)) };
  }
  return s;
}

/** The schema for the value at JSON-pointer `pointer` ("/nodes/1/kind"), or null. */
export function schemaAt(root, pointer, document) {
  let schema = root;
  let value = document;
  const parts = pointer ? pointer.split("/").slice(1).map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~")) : [];
  for (const part of parts) {
    const s = resolve(root, schema, value);
    if (!s) return null;
    const child = value != null && typeof value === "object" ? value[part] : undefined;
    if (s.properties && Object.prototype.hasOwnProperty.call(s.properties, part)) schema = s.properties[part];
    else if (s.items && /^\d+$/.test(part)) schema = s.items;
    else if (s.additionalProperties && typeof s.additionalProperties === "object") schema = s.additionalProperties;
    else return null;
    value = child;
  }
  return { name: parts.length ? parts[parts.length - 1] : "(document)", schema: resolve(root, schema, value) };
}

function typeOf(root, s) {
  if (!s) return "";
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (Array.isArray(s.enum)) return "one of " + s.enum.map((v) => JSON.stringify(v)).join(", ");
  if (s.union) return s.union.map((b) => b.title || typeOf(root, b)).join(" | ");
  const t = Array.isArray(s.type) ? s.type.join(" | ") : s.type || "";
  if (t === "array" && s.items) {
    const item = resolve(root, s.items, undefined);
    return `array of ${item.title && item.type === "object" ? item.title : typeOf(root, item) || "values"}`;
  }
  return t;
}

function limits(s) {
  const out = [];
  if (s.minimum !== undefined) out.push(`≥ ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) out.push(`> ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined) out.push(`≤ ${s.maximum}`);
  if (s.exclusiveMaximum !== undefined) out.push(`< ${s.exclusiveMaximum}`);
  if (s.minItems !== undefined) out.push(`at least ${s.minItems} item(s)`);
  if (s.maxItems !== undefined) out.push(`at most ${s.maxItems} items`);
  if (s.minLength !== undefined && s.minLength > 1) out.push(`at least ${s.minLength} characters`);
  if (s.maxLength !== undefined) out.push(`at most ${s.maxLength} characters`);
  return out;
}

/** {name, type, description} for the field at `pos`, or null. */
export function fieldHelp(state, schema, pos, side = -1) {
  if (!schema) return null;
  let pointer;
  try {
    pointer = jsonPointerForPosition(state, pos, side);
  } catch {
    return null;
  }
  let document;
  try {
    document = JSON.parse(state.doc.toString());
  } catch {
    document = undefined;
  }
  const found = schemaAt(schema, pointer || "", document);
  if (!found || !found.schema) return null;
  const s = found.schema;
  const type = [typeOf(schema, s), ...limits(s)].filter(Boolean).join(", ");
  return { name: found.name, pointer, type, description: s.description || s.title || "" };
}

/** Append `text` to `parent`, with ``code`` / `code` spans as <code> elements (no innerHTML). */
export function appendRich(parent, text) {
  const re = /``([^`]+)``|`([^`]+)`/g;
  let last = 0;
  let match;
  while ((match = re.exec(text)) !== null) {
    if (match.index > last) parent.append(text.slice(last, match.index));
    const code = document.createElement("code");
    code.textContent = match[1] ?? match[2];
    parent.append(code);
    last = re.lastIndex;
  }
  if (last < text.length) parent.append(text.slice(last));
  return parent;
}

/** A `hoverTooltip` source showing fieldHelp. */
export function schemaHover(getSchema) {
  return (view, pos, side) => {
    const help = fieldHelp(view.state, getSchema(view.state), pos, side);
    if (!help || (!help.description && !help.type)) return null;
    const word = view.state.wordAt(pos);
    return {
      pos: word ? word.from : pos,
      end: word ? word.to : pos,
      above: true,
      create() {
        const dom = document.createElement("div");
        dom.className = "cm-schema-help";
        const head = document.createElement("p");
        const name = document.createElement("strong");
        name.textContent = help.name;
        head.append(name);
        if (help.type) head.append(` (${help.type})`);
        dom.append(head);
        if (help.description) dom.append(appendRich(document.createElement("p"), help.description));
        return { dom };
      },
    };
  };
}
