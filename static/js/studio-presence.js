/* Authoring studio: a sign that someone else has this draft open (issue #34, "working together";
 * docs/studio.md). While the editor page is open and visible it tells the server every 20 s that
 * this author has the draft open (POST /api/v1/packages/<id>/presence/); the answer lists the
 * other people who have it open now, and the polite live region beside the Save bar
 * (#studio-presence) says so: "Maria Lopez is also editing this package", "Maria Lopez and
 * 2 others are also editing this package", or nothing. A hidden page stops its heartbeats (its
 * entry expires after 60 s) and beats again when it is shown; leaving the page (pagehide) says
 * "left" with a keepalive request, so the others' sign goes at their next heartbeat.
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

  // others: [{name, lastSeen}], most recently seen first. "" when nobody else is here.
  function presenceSentence(others, i18n = ENGLISH) {
    if (!others || !others.length) return "";
    const name = others[0].name;
    if (others.length === 1) {
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

    function show(others) {
      const text = presenceSentence(others, i18n);
      if (sign.textContent !== text) sign.textContent = text;
      sign.title = others.length > 1 ? others.map((o) => o.name).join(", ") : "";
    }

    // One heartbeat, then the next one; none while the page is hidden or being left. A beat that
    // fails (offline, a restart) keeps the last sign and tries again at the next one.
    async function beat() {
      win.clearTimeout(timer);
      timer = null;
      if (leaving || doc.visibilityState !== "visible") return;
      try {
        const response = await send({}, false);
        if (response.ok) {
          const data = await response.json();
          if (data.heartbeatSec > 0) every = data.heartbeatSec * 1000;
          if (!leaving) show(data.others || []);
        }
      } catch (e) {
        // the next heartbeat tries again
      }
      win.clearTimeout(timer);
      if (!leaving && doc.visibilityState === "visible") timer = win.setTimeout(beat, every);
    }

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
