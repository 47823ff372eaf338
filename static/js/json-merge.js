/* A three-way merge of two edits of one JSON document (the studio's answer to "someone else saved
 * this package first", docs/studio.md "Working together"). Pure functions, no DOM. Loaded as a
 * plain script before studio.js (window.VivaMerge); under Node (frontend/test, `node --test`) the
 * same file is a CommonJS module.
 *
 * merge3(base, mine, theirs) -> {merged, conflicts}: `base` is the document both edits started
 * from (what this page last saved or loaded), `mine` the author's, `theirs` the one saved
 * meanwhile. Where only one side changed a value, that change is taken; where both made the same
 * change, it is taken once. Objects merge key by key. Arrays whose items are objects with unique
 * string ids ("id", else their first "...Id" key: nodes by nodeId, learning outcomes, evidence
 * targets and transitions by id, pools by poolId) merge item by item:
 * theirs' order, with items only mine added after their neighbours; an item one side removed is
 * removed unless the other side changed it (a conflict). Anything else both sides changed
 * differently is a conflict: `merged` keeps mine there (nothing typed is lost; `prefer` "theirs"
 * takes theirs) and `conflicts` names it, {path, mine, theirs}, with `path` in the editor's
 * notation (nodes[q1].prompt).
 */
(function (root, factory) {
  "use strict";
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else root.VivaMerge = api;
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const ABSENT = undefined;

  function isObject(value) {
    return value !== null && typeof value === "object" && !Array.isArray(value);
  }

  function equal(a, b) {
    if (a === b) return true;
    if (Array.isArray(a) && Array.isArray(b)) {
      return a.length === b.length && a.every((item, i) => equal(item, b[i]));
    }
    if (isObject(a) && isObject(b)) {
      const keys = Object.keys(a);
      return keys.length === Object.keys(b).length && keys.every((k) => k in b && equal(a[k], b[k]));
    }
    return false;
  }

  // The key naming an item: "id", else its first key ending in "Id" (nodeId, poolId).
  function idKey(item) {
    if (!isObject(item)) return null;
    if ("id" in item) return "id";
    return Object.keys(item).find((k) => k.endsWith("Id")) || null;
  }

  // The array's items by id, or null unless every item is an object with a unique string id
  // under the same key.
  function byId(list) {
    if (!Array.isArray(list)) return null;
    const key = list.length ? idKey(list[0]) : "id";
    const found = new Map();
    for (const item of list) {
      if (!isObject(item) || typeof item[key] !== "string" || found.has(item[key])) return null;
      found.set(item[key], item);
    }
    return found;
  }

  function keyPath(path, key) {
    return /^[A-Za-z_$][\w$]*$/.test(key) ? (path ? path + "." + key : key) : path + "[" + JSON.stringify(key) + "]";
  }

  function mergeValue(base, mine, theirs, path, conflicts, prefer) {
    if (equal(mine, theirs)) return mine;
    if (equal(base, mine)) return theirs;
    if (equal(base, theirs)) return mine;
    if (isObject(mine) && isObject(theirs)) {
      return mergeObjects(isObject(base) ? base : {}, mine, theirs, path, conflicts, prefer);
    }
    const mineIds = byId(mine);
    const theirIds = byId(theirs);
    if (mineIds && theirIds) {
      return mergeLists(byId(base) || new Map(), mineIds, theirIds, mine, theirs, path, conflicts, prefer);
    }
    conflicts.push({ path: path || "(the whole document)", mine, theirs });
    return prefer === "theirs" ? theirs : mine;
  }

  function mergeObjects(base, mine, theirs, path, conflicts, prefer) {
    const merged = {};
    const keys = [...Object.keys(theirs), ...Object.keys(mine).filter((k) => !(k in theirs))];
    for (const key of keys) {
      const value = mergeValue(
        key in base ? base[key] : ABSENT,
        key in mine ? mine[key] : ABSENT,
        key in theirs ? theirs[key] : ABSENT,
        keyPath(path, key),
        conflicts,
        prefer,
      );
      if (value !== ABSENT) merged[key] = value;
    }
    return merged;
  }

  function mergeLists(base, mineIds, theirIds, mine, theirs, path, conflicts, prefer) {
    const order = [...theirIds.keys()];
    const mineOrder = [...mineIds.keys()];
    mineOrder.forEach((id, index) => {
      if (theirIds.has(id) || base.has(id)) return; // theirs' place, or removed by them
      const before = index > 0 ? order.indexOf(mineOrder[index - 1]) : -1;
      order.splice(before + 1, 0, id);
    });
    for (const id of mineIds.keys()) {
      if (!order.includes(id) && base.has(id)) order.push(id); // kept by mine, removed by theirs
    }
    const merged = [];
    for (const id of order) {
      const value = mergeValue(
        base.has(id) ? base.get(id) : ABSENT,
        mineIds.has(id) ? mineIds.get(id) : ABSENT,
        theirIds.has(id) ? theirIds.get(id) : ABSENT,
        path + "[" + id + "]",
        conflicts,
        prefer,
      );
      if (value !== ABSENT) merged.push(value);
    }
    return merged;
  }

  // `prefer`: whose value a conflict takes in `merged` ("mine", the default, or "theirs").
  function merge3(base, mine, theirs, prefer = "mine") {
    const conflicts = [];
    const merged = mergeValue(base, mine, theirs, "", conflicts, prefer);
    return { merged, conflicts };
  }

  return { merge3, equal };
});
