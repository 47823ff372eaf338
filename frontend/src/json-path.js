// Finding paths -> positions in the JSON text, by walking the Lezer JSON syntax tree.
//
// The validator names a place in a package with a path such as
//   metadata.title
//   nodes[3].kind                            (array index)
//   nodes[q-dijkstra].followUpPolicy.maxFollowUps   (array element addressed by its id)
//   questionPools[pool-x].nodeIds
// `locatePath(state, path)` answers where that is in the editor's document, or the closest
// enclosing place it could find when the path goes somewhere that is not (or not yet) written.

import { ensureSyntaxTree, syntaxTree } from "@codemirror/language";

// Keys that identify an element of an array, tried in this order for `name[some-id]`. Reports
// address nodes by nodeId (ioa/schema/paths.py) and everything else by index; the others are
// accepted so that hand-written paths such as questionPools[pool-x] work too.
const ID_KEYS = ["nodeId", "poolId", "id"];

/**
 * Split a report path into steps:
 * 'nodes[q-1].a["my key"][0]' -> [{key: "nodes"}, {select: "q-1"}, {key: "a"}, {key: "my key"},
 * {select: "0"}]. The document itself is "$" (no steps).
 */
export function parsePath(path) {
  const steps = [];
  const re = /\[("(?:[^"\\]|\\.)*")\]|\[([^\]]*)\]|([^.[\]]+)/g;
  let match;
  while ((match = re.exec(path || "")) !== null) {
    if (match[1] !== undefined) {
      let key;
      try {
        key = JSON.parse(match[1]);
      } catch {
        key = match[1].slice(1, -1);
      }
      steps.push({ key });
    } else if (match[2] !== undefined) {
      steps.push({ select: match[2] });
    } else {
      steps.push({ key: match[3] });
    }
  }
  if (steps.length && (steps[0].key === "$" || steps[0].key === "#")) steps.shift();
  return steps;
}

function isValue(node) {
  return !node.type.isError && !["{", "}", "[", "]", ",", ":", "PropertyName"].includes(node.name);
}

function children(node) {
  const out = [];
  for (let child = node.firstChild; child; child = child.nextSibling) out.push(child);
  return out;
}

function propertyValue(property) {
  const last = property.lastChild;
  return last && isValue(last) && last.name !== "Property" ? last : null;
}

function decode(state, node) {
  const raw = state.sliceDoc(node.from, node.to);
  try {
    return JSON.parse(raw);
  } catch {
    return raw.replace(/^"|"$/g, "");
  }
}

function findProperty(state, objectNode, key) {
  for (const property of children(objectNode)) {
    if (property.name !== "Property") continue;
    const name = property.firstChild;
    if (name && name.name === "PropertyName" && decode(state, name) === key) return property;
  }
  return null;
}

function findElement(state, arrayNode, selector) {
  const elements = children(arrayNode).filter(isValue);
  if (/^\d+$/.test(selector)) {
    const element = elements[Number(selector)];
    return element ? { element, idProperty: null } : null;
  }
  for (const idKey of ID_KEYS) {
    for (const element of elements) {
      if (element.name !== "Object") continue;
      const property = findProperty(state, element, idKey);
      const value = property && propertyValue(property);
      if (value && value.name === "String" && decode(state, value) === selector) {
        return { element, idProperty: property };
      }
    }
  }
  // A plain array of strings (e.g. nodeIds) addressed by one of its values.
  for (const element of elements) {
    if (element.name === "String" && decode(state, element) === selector) {
      return { element, idProperty: null };
    }
  }
  return null;
}

function fullTree(state) {
  // The parser works lazily on long documents; paths may point anywhere, so finish the parse.
  return ensureSyntaxTree(state, state.doc.length, 500) || syntaxTree(state);
}

function isScalar(node) {
  return node.name !== "Object" && node.name !== "Array";
}

/**
 * Where `path` is in `state`'s document.
 * Returns {from, to, cursor: {anchor, head}, found, matched, steps} or null for an empty document.
 *  - from/to: the range to mark (a property's name, plus its value when that is a scalar);
 *  - cursor: where to put the selection when jumping there (a scalar value is selected);
 *  - found: whether every step of the path was found; otherwise the range is the deepest
 *    enclosing place that was, and `matched` says how many steps that covers.
 */
export function locatePath(state, path) {
  return locateSteps(state, parsePath(path));
}

/** "#/nodes/1/followUpPolicy" (JSON Pointer, as schema validators report) -> steps. */
export function pointerToSteps(pointer) {
  const text = String(pointer || "").replace(/^#/, "");
  if (!text || text === "/") return [];
  return text
    .slice(1)
    .split("/")
    .map((part) => ({ key: part.replace(/~1/g, "/").replace(/~0/g, "~") }));
}

/** Steps -> report-style path: [{key: "nodes"}, {key: "1"}, {key: "kind"}] -> "nodes[1].kind". */
export function stepsToPath(steps) {
  if (!steps.length) return "$";
  return steps
    .map((step, i) => {
      const name = step.key !== undefined ? step.key : step.select;
      if (step.select !== undefined || /^\d+$/.test(name)) return `[${name}]`;
      if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) return i === 0 ? name : `.${name}`;
      return `[${JSON.stringify(name)}]`;
    })
    .join("");
}

/** Like locatePath, for already split steps. */
export function locateSteps(state, steps) {
  const top = fullTree(state).topNode;
  let value = children(top).find(isValue) || null;
  if (!value) return null;
  let range = { from: value.from, to: value.from + 1 };
  let cursor = { anchor: value.from, head: value.from };
  let matched = 0;

  for (const step of steps) {
    if (step.key !== undefined && value && value.name === "Object") {
      const property = findProperty(state, value, step.key);
      if (!property) break;
      const name = property.firstChild;
      const child = propertyValue(property);
      if (child && isScalar(child)) {
        range = { from: name.from, to: child.to };
        cursor = { anchor: child.from, head: child.to };
      } else {
        range = { from: name.from, to: name.to };
        cursor = { anchor: name.from, head: name.from };
      }
      value = child;
    } else if (value && value.name === "Array") {
      const selector = step.select !== undefined ? step.select : step.key;
      const hit = findElement(state, value, selector);
      if (!hit) break;
      const { element, idProperty } = hit;
      if (idProperty) {
        // Point at `"nodeId": "q-1"`: the line that names the element.
        range = { from: idProperty.from, to: idProperty.to };
        cursor = { anchor: idProperty.from, head: idProperty.from };
      } else if (isScalar(element)) {
        range = { from: element.from, to: element.to };
        cursor = { anchor: element.from, head: element.to };
      } else {
        range = { from: element.from, to: element.from + 1 };
        cursor = { anchor: element.from, head: element.from };
      }
      value = element;
    } else {
      break;
    }
    matched += 1;
  }
  return { ...range, cursor, found: matched === steps.length, matched, steps: steps.length };
}
