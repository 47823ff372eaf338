/* Authoring studio: a sign that someone else has this draft open (issue #34, "working together";
 * docs/studio.md). While the editor page is open and visible it tells the server every 20 s that
 * this author has the draft open (POST /api/v1/packages/<id>/presence/); the answer lists the
 * other people who have it open now, and the polite live region beside the Save bar
 * (#studio-presence) says so: "Maria Lopez is also editing this package", "… in node q2" when
 * her editor has a node open, "Maria Lopez is also editing this node (q2)" when it is the node
 * this author has open, "Maria Lopez and 2 others are also editing this package" (each one's node
 * in the sign's title), or nothing. The heartbeat names the node this page has open
 * (window.vivaStudioNode, set by studio-flow.js) and is sent at once, 0.5 s after the author
 * opens another node ("studio:node"). A hidden page stops its heartbeats (its
 * entry expires after 60 s) and beats again when it is shown; leaving the page (pagehide) says
 * "left" with a keepalive request, so the others' sign goes at their next heartbeat. While
 * someone else has the draft open the server asks for a heartbeat every 5 s; each answer carries
 * the draft's saved revision, announced as "studio:revision" for studio.js to bring their saved
 * changes in (live updates).
 *
 * presenceSentence(others, i18n) is the wording, a pure function: under Node (frontend/test,
 * `node --test`) this file is a CommonJS module exporting it; in the page it runs the heartbeat.
 * Words go through the page's JavaScript catalogue (djangojs.po, German and Spanish).
 */
(function (root, factory) {
  "use strict";
  const api = factory();
  if (typeof module === "object" && module.exports) module.exports = api;
  else api.start(root);
})(typeof self !== "undefined" ? self : this, function () {
  "use strict";

  const ENGLISH = {
    gettext: (text) => text,
    ngettext: (one, many, n) => (n === 1 ? one : many),
    interpolate: (text, values) => text.replace(/%\((\w+)\)s/g, (_, key) => String(values[key])),
  };

  // others: [{name, lastSeen, nodeId}], most recently seen first; mine: the node this page has
  // open (or null). "" when nobody else is here.
  function presenceSentence(others, i18n = ENGLISH, mine = null) {
    if (!others || !others.length) return "";
    const name = others[0].name;
    const node = others[0].nodeId || null;
    if (others.length === 1) {
      if (node && node === mine) {
        return i18n.interpolate(i18n.gettext("%(name)s is also editing this node (%(node)s)"), { name, node }, true);
      }
      if (node) {
        return i18n.interpolate(i18n.gettext("%(name)s is also editing this package, in node %(node)s"), { name, node }, true);
      }
      return i18n.interpolate(i18n.gettext("%(name)s is also editing this package"), { name }, true);
    }
    const n = others.length - 1;
    const text = i18n.ngettext(
      "%(name)s and %(n)s other are also editing this package",
      "%(name)s and %(n)s others are also editing this package",
      n,
    );
    return i18n.interpolate(text, { name, n }, true);
  }

  function pageI18n(win) {
    if (typeof win.gettext !== "function") return ENGLISH;
    return { gettext: win.gettext, ngettext: win.ngettext, interpolate: win.interpolate };
  }

  // keepalive: the request outlives the page (the "left" sent on pagehide).
  function post(win, url, csrf, body, keepalive) {
    return win.fetch(url, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-CSRFToken": csrf, Accept: "application/json" },
      credentials: "same-origin",
      body: JSON.stringify(body),
      keepalive,
    });
  }

  function start(win) {
    const doc = win.document;
    const studio = doc.getElementById("studio");
    const sign = doc.getElementById("studio-presence");
    if (!studio || !sign || !studio.dataset.presenceUrl) return;
    const url = studio.dataset.presenceUrl;
    const csrf = studio.querySelector("input[name=csrfmiddlewaretoken]").value;
    const i18n = pageI18n(win);
    let every = 20000;
    let timer = null;
    let leaving = false;

    const send = (body, keepalive) => post(win, url, csrf, body, keepalive);

    let others = [];
    let soon = null;
    const mine = () => win.vivaStudioNode || null;

    function show() {
      const text = presenceSentence(others, i18n, mine());
      if (sign.textContent !== text) sign.textContent = text;
      sign.title = others.length > 1 ? others.map((o) => (o.nodeId ? o.name + " (" + o.nodeId + ")" : o.name)).join(", ") : "";
    }

    // One heartbeat, then the next one; none while the page is hidden or being left. A beat that
    // fails (offline, a restart) keeps the last sign and tries again at the next one.
    async function beat() {
      win.clearTimeout(timer);
      timer = null;
      if (leaving || doc.visibilityState !== "visible") return;
      try {
        const response = await send({ nodeId: mine() }, false);
        if (response.ok) {
          const data = await response.json();
          if (data.heartbeatSec > 0) every = data.heartbeatSec * 1000;
          others = data.others || [];
          if (!leaving) show();
          // The draft's saved revision: studio.js brings in what someone else saved.
          if (Number.isInteger(data.revision)) {
            doc.dispatchEvent(new win.CustomEvent("studio:revision", { detail: { revision: data.revision } }));
          }
        }
      } catch (e) {
        // the next heartbeat tries again
      }
      win.clearTimeout(timer);
      if (!leaving && doc.visibilityState === "visible") timer = win.setTimeout(beat, every);
    }

    // Another node opened: the sign's wording at once, the others told half a second later
    // (one heartbeat for a quick run of clicks).
    doc.addEventListener("studio:node", () => {
      show();
      win.clearTimeout(soon);
      soon = win.setTimeout(beat, 500);
    });
    doc.addEventListener("visibilitychange", () => {
      if (doc.visibilityState === "visible") beat();
      else win.clearTimeout(timer);
    });
    win.addEventListener("pagehide", () => {
      leaving = true;
      win.clearTimeout(timer);
      send({ left: true }, true).catch(() => {});
    });
    win.addEventListener("pageshow", (event) => {
      if (!event.persisted) return; // back from the back/forward cache: here again
      leaving = false;
      beat();
    });
    beat();
  }

  return { presenceSentence, start };
});
