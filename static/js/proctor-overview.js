/* The live overview of a sitting (templates/sessions/proctor_sitting.html; docs/proctoring.md).
 *
 * Socket: ws/proctor/sittings/<id>/ (proctoring/consumers.py). Frames received:
 *   {"kind":"snapshot","rows":[...],"alerts":[...],"asOf"}  then
 *   {"kind":"rows","rows":[...]} (changed rows),  {"kind":"alert","alert":{...}} (new, or a
 *   repeat: the same id with a higher "count" and the latest "at"),  and
 *   {"kind":"alert_cleared","id","sessionId"} (a candidate who was disconnected came back).
 * Sent: {"kind":"ping"} every 15 s (its "pong" carries the server time).
 *
 * Rows carry their clocks as of "asOf" and whether they run; the page ticks them every second.
 * The "Connection" column shows the candidate's exam room (row.candidateConnection: connected,
 * reconnecting, disconnected since, reconnects; proctoring/presence.py) and the examiner bot.
 * Filters (status, search) apply at once and are kept in the URL. Alerts are listed newest first,
 * announced in an assertive live region, and, only if the proctor ticks the box (remembered in
 * this browser), sound a short tone (WebAudio; nothing is downloaded). An alert is one per
 * session and kind (guardrails: per guardrail type; issue #31): an "alert" frame with an id the
 * page has is a repeat, shown in place ("×count", the latest time; the item does not move, so
 * focus stays) and not announced again, except politely at most once a minute per alert
 * (ALERT_UPDATE_MS) with the new count. A dismissed alert stays dismissed in this browser until
 * it happens again: its count at dismissal is remembered, and a higher count brings it back at
 * the top, announced, with how many happened since. No inline script (CSP); configuration comes
 * as JSON in the page.
 */
(function () {
  "use strict";

  const cfg = JSON.parse(document.getElementById("proctor-overview-config").textContent);
  const $ = (id) => document.getElementById(id);
  const FINISHED = new Set(["completed", "aborted", "expired"]);
  const FILTERS = {
    in_progress: new Set(["in_progress"]),
    waiting: new Set(["waiting", "invited"]),
    paused: new Set(["paused", "recovering"]),
    finished: FINISHED,
    scheduled: new Set(["scheduled"]),
  };
  const HEALTH = {
    good: "Good",
    unstable: "Unstable",
    lost: "Bot not running",
    idle: "Not started",
    ended: "Ended",
  };
  const CANDIDATE = {
    connected: "Connected",
    reconnecting: "Reconnecting",
    disconnected: "Disconnected",
    not_connected: "Not connected yet",
  };
  const dismissedKey = `viva-dismissed-${cfg.sittingId}`;
  const ALERT_UPDATE_MS = 60000; // a repeat is announced (politely) at most this often per alert
  const soundKey = "viva-alert-sound";

  const S = {
    rows: new Map(),
    alerts: new Map(),
    dismissed: readDismissed(), // alert id -> its count when dismissed
    announced: new Map(), // alert id -> when it was last announced (Date.now())
    offset: 0,
    socket: null,
    live: false,
    retry: 0,
    filter: cfg.filter || "all",
    query: cfg.query || "",
  };

  /** The dismissed alerts of this sitting: [id, count] pairs (a bare id, as stored before
   * alerts were counted, is dismissed for good). */
  function readDismissed() {
    let stored;
    try {
      stored = JSON.parse(window.localStorage.getItem(dismissedKey) || "[]");
    } catch (error) {
      stored = [];
    }
    const found = new Map();
    for (const item of Array.isArray(stored) ? stored : []) {
      if (typeof item === "string") found.set(item, Number.MAX_SAFE_INTEGER);
      else if (Array.isArray(item) && typeof item[0] === "string") found.set(item[0], Number(item[1]) || 1);
    }
    return found;
  }

  function serverNow() {
    return Date.now() + S.offset;
  }

  function fmt(ms) {
    if (ms === null || ms === undefined) return "—";
    const negative = ms < 0;
    const total = Math.round(Math.abs(ms) / 1000);
    const text = `${Math.floor(total / 60)}:${String(total % 60).padStart(2, "0")}`;
    return negative ? `−${text}` : text;
  }

  function clock(row, field) {
    const value = row[field];
    if (value === null || value === undefined) return null;
    if (!row.clockRunning) return value;
    const passed = serverNow() - Date.parse(row.asOf);
    return field === "elapsedMs" ? value + passed : value - passed;
  }

  function needsAttention(row) {
    return row.handRaised || row.status === "recovering" || row.status === "aborted" || row.examState === "ready" ||
      row.health === "lost" || row.health === "unstable" || Boolean(row.candidateConnection && row.candidateConnection.alert);
  }

  function shown(row) {
    if (S.filter === "attention" && !needsAttention(row)) return false;
    if (FILTERS[S.filter] && !FILTERS[S.filter].has(row.status)) return false;
    const needle = S.query.trim().toLowerCase();
    return !needle || `${row.candidate} ${row.email}`.toLowerCase().includes(needle);
  }

  // --- the table -------------------------------------------------------------------------------
  function cell(tr, index, text) {
    const td = tr.children[index];
    if (td.textContent !== text) td.textContent = text;
  }

  // The candidate's exam room connection in words (proctoring/presence.py describe() says the same).
  function candidateText(c) {
    if (!c) return "";
    const when = c.since ? new Date(c.since).toLocaleTimeString() : "";
    let text = CANDIDATE[c.status] || c.status;
    if (c.status === "reconnecting") text += ` (offline since ${when})`;
    else if (c.status === "disconnected") text += ` since ${when}`;
    else if (c.status === "connected" && c.sockets > 1) text += ` in ${c.sockets} tabs`;
    if (c.reconnects) text += ` · ${c.reconnects} reconnect${c.reconnects === 1 ? "" : "s"}`;
    return text;
  }

  function connectionCell(td, row) {
    if (td.children.length !== 2) {
      const candidate = document.createElement("span");
      const bot = document.createElement("span");
      candidate.className = "conn-line conn-candidate";
      bot.className = "conn-line conn-bot";
      td.replaceChildren(candidate, bot);
    }
    const [candidate, bot] = td.children;
    const c = row.candidateConnection || {};
    const who = `Candidate: ${candidateText(c)}`;
    if (candidate.textContent !== who) candidate.textContent = who;
    candidate.dataset.status = c.status || "";
    const restarts = row.botRestarts ? `, ${row.botRestarts} restart${row.botRestarts === 1 ? "" : "s"}` : "";
    const examiner = `Examiner bot: ${HEALTH[row.health] || row.health}${restarts}`;
    if (bot.textContent !== examiner) bot.textContent = examiner;
  }

  function rowElement(row) {
    const tr = document.createElement("tr");
    tr.dataset.sessionId = row.sessionId;
    const th = document.createElement("th");
    th.scope = "row";
    const link = document.createElement("a");
    link.href = row.url;
    th.append(link);
    tr.append(th);
    for (let i = 0; i < 9; i += 1) tr.append(document.createElement("td"));
    const badge = document.createElement("span");
    tr.children[1].append(badge);
    return tr;
  }

  function fill(tr, row) {
    const link = tr.children[0].firstChild;
    if (link.textContent !== row.candidate) link.textContent = row.candidate;
    const badge = tr.children[1].firstChild;
    const label = row.handRaised ? `${row.statusLabel} · hand raised` : row.statusLabel;
    if (badge.textContent !== label) badge.textContent = label;
    badge.className = `status status-${row.status}`;
    const node = row.nodeId ? `${row.nodeId}${row.nodeKind ? ` (${row.nodeKind})` : ""}` : "—";
    cell(tr, 2, node);
    cell(tr, 3, fmt(clock(row, "elapsedMs")));
    cell(tr, 4, fmt(clock(row, "examRemainingMs")));
    cell(tr, 5, fmt(clock(row, "nodeRemainingMs")));
    const here = row.nodeMaxFollowUps ? ` (${row.nodeFollowUps}/${row.nodeMaxFollowUps} here)` : "";
    cell(tr, 6, `${row.followUps}${here}`);
    cell(tr, 7, String(row.guardrails));
    const open = row.openRecoveries.length ? ` (now: ${row.openRecoveries.join(", ")})` : "";
    cell(tr, 8, `${row.recoveries}${open}`);
    connectionCell(tr.children[9], row);
    tr.classList.toggle("needs-attention", needsAttention(row));
  }

  function render() {
    const body = $("overview-rows");
    const wanted = [...S.rows.values()].filter(shown);
    const existing = new Map([...body.querySelectorAll("tr[data-session-id]")].map((tr) => [tr.dataset.sessionId, tr]));
    body.querySelectorAll("tr:not([data-session-id])").forEach((tr) => tr.remove());
    let previous = null;
    for (const row of wanted) {
      let tr = existing.get(row.sessionId);
      if (!tr || !tr.children[1].firstChild || tr.children[1].firstChild.nodeType !== 1) {
        if (tr) tr.remove();
        tr = rowElement(row);
      }
      existing.delete(row.sessionId);
      fill(tr, row);
      const anchor = previous ? previous.nextSibling : body.firstChild;
      if (tr !== anchor) body.insertBefore(tr, anchor);
      previous = tr;
    }
    existing.forEach((tr) => tr.remove());
    if (!wanted.length) {
      const tr = document.createElement("tr");
      const td = document.createElement("td");
      td.colSpan = 10;
      td.textContent = S.rows.size ? "No candidate matches." : "No candidate in this sitting yet.";
      tr.append(td);
      body.append(tr);
    }
    $("row-count").textContent = `(${wanted.length} of ${S.rows.size} shown)`;
    if (S.live) liveText(`Live: ${S.rows.size} candidate${S.rows.size === 1 ? "" : "s"}, updated as it happens.`);
  }

  function tick() {
    document.querySelectorAll("#overview-rows tr[data-session-id]").forEach((tr) => {
      const row = S.rows.get(tr.dataset.sessionId);
      if (!row || !row.clockRunning) return;
      cell(tr, 3, fmt(clock(row, "elapsedMs")));
      cell(tr, 4, fmt(clock(row, "examRemainingMs")));
      cell(tr, 5, fmt(clock(row, "nodeRemainingMs")));
    });
  }

  function applyRows(rows) {
    for (const row of rows) S.rows.set(row.sessionId, row);
    render();
  }

  // --- alerts ----------------------------------------------------------------------------------
  let audio = null;

  function beep(severity) {
    if (!$("alert-sound").checked) return;
    try {
      audio = audio || new (window.AudioContext || window.webkitAudioContext)();
      const tone = audio.createOscillator();
      const gain = audio.createGain();
      tone.frequency.value = severity === "urgent" ? 880 : 660;
      gain.gain.value = 0.08;
      tone.connect(gain).connect(audio.destination);
      tone.start();
      tone.stop(audio.currentTime + (severity === "urgent" ? 0.45 : 0.2));
    } catch (error) {
      /* no audio in this browser: the visual and spoken alert remain */
    }
  }

  const countOf = (alert) => (typeof alert.count === "number" && alert.count > 0 ? alert.count : 1);
  const timeOf = (iso) => new Date(iso).toLocaleTimeString();

  /** The item's texts: "<label> ×<count>: <who>" and "latest <time>, first <time> · <detail>". */
  function alertTexts(alert) {
    const row = S.rows.get(alert.sessionId);
    const who = row ? row.candidate : "a candidate";
    const count = countOf(alert);
    const label = `${alert.label}${count > 1 ? ` ×${count}` : ""}: ${who}`;
    let when = count > 1 ? `latest ${timeOf(alert.at)}, first ${timeOf(alert.firstAt || alert.at)}` : timeOf(alert.at);
    if (alert.detail) when += ` · ${alert.detail}`;
    const dismissedAt = S.dismissed.get(alert.id);
    if (dismissedAt !== undefined && count > dismissedAt) when += ` · ${count - dismissedAt} since you dismissed it`;
    return { who, label, when: ` ${when} ` };
  }

  function alertItem(alert) {
    const row = S.rows.get(alert.sessionId);
    const texts = alertTexts(alert);
    const li = document.createElement("li");
    li.className = `alert alert-${alert.severity}`;
    li.dataset.alertId = alert.id;
    const label = document.createElement("span");
    label.className = "alert-label";
    label.textContent = texts.label;
    const when = document.createElement("span");
    when.className = "hint alert-when";
    when.textContent = texts.when;
    const link = document.createElement("a");
    link.href = row ? row.url : "#";
    link.textContent = `Open ${texts.who}'s session`;
    const dismiss = document.createElement("button");
    dismiss.type = "button";
    dismiss.className = "secondary small";
    dismiss.textContent = "Dismiss";
    dismiss.setAttribute("aria-label", `Dismiss alert: ${alert.label}, ${texts.who}`);
    dismiss.addEventListener("click", () => {
      S.dismissed.set(alert.id, countOf(S.alerts.get(alert.id) || alert));
      window.localStorage.setItem(dismissedKey, JSON.stringify([...S.dismissed].slice(-500)));
      const next = li.nextElementSibling || li.previousElementSibling;
      li.remove();
      renderAlertsEmpty();
      if (next) (next.querySelector("button") || next).focus();
      else $("alerts-heading").focus();
    });
    li.append(label, when, link, " ", dismiss);
    return li;
  }

  function renderAlertsEmpty() {
    $("no-alerts").hidden = $("alerts").children.length > 0;
  }

  function clearAlert(id, sessionId) {
    const shown = S.alerts.has(id);
    S.alerts.delete(id);
    const li = alertLi(id);
    if (li) {
      const focused = li.contains(document.activeElement);
      li.remove();
      renderAlertsEmpty();
      if (focused) $("alerts-heading").focus();
    }
    if (shown && !S.dismissed.has(id)) {
      const row = S.rows.get(sessionId);
      say("alert-announcer", `Reconnected: ${row ? row.candidate : "a candidate"}.`);
    }
  }

  function say(region, text) {
    const line = document.createElement("p");
    line.textContent = text;
    $(region).append(line);
    window.setTimeout(() => line.remove(), 15000);
  }

  const alertLi = (id) => $("alerts").querySelector(`li[data-alert-id="${CSS.escape(id)}"]`);
  const hiddenByDismissal = (alert) => S.dismissed.has(alert.id) && countOf(alert) <= S.dismissed.get(alert.id);

  /** An alert from the server: new (listed; announced and sounded when `fresh`), a repeat of
   * one listed (updated in place; announced politely at most once per ALERT_UPDATE_MS), or a
   * repeat of one dismissed (listed again at the top, announced, once its count is higher). */
  function addAlert(alert, fresh) {
    S.alerts.set(alert.id, alert);
    if (hiddenByDismissal(alert)) return;
    const shown = alertLi(alert.id);
    if (shown) {
      const texts = alertTexts(alert);
      shown.querySelector(".alert-label").textContent = texts.label;
      shown.querySelector(".alert-when").textContent = texts.when;
      const last = S.announced.get(alert.id) || 0;
      if (fresh && Date.now() - last >= ALERT_UPDATE_MS) {
        S.announced.set(alert.id, Date.now());
        say("alert-updates", `${texts.label}, ${countOf(alert)} times now.`);
      }
      return;
    }
    const li = alertItem(alert);
    const again = S.dismissed.has(alert.id);
    if (fresh) $("alerts").prepend(li);
    else $("alerts").append(li);
    renderAlertsEmpty();
    if (fresh) {
      const row = S.rows.get(alert.sessionId);
      S.announced.set(alert.id, Date.now());
      say("alert-announcer", `${alert.label}${again ? " again" : ""}: ${row ? row.candidate : "a candidate"}.`);
      beep(alert.severity);
    }
  }

  // --- the socket ------------------------------------------------------------------------------
  function liveText(text) {
    $("live-state").textContent = text;
  }

  function connect() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    const socket = new WebSocket(`${scheme}//${window.location.host}${cfg.socketPath}`);
    S.socket = socket;
    socket.addEventListener("message", (message) => {
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch (error) {
        return;
      }
      if (frame.kind === "snapshot") {
        S.offset = Date.parse(frame.asOf) - Date.now();
        S.rows = new Map();
        frame.rows.forEach((row) => S.rows.set(row.sessionId, row));
        $("alerts").replaceChildren();
        S.alerts = new Map();
        render();
        frame.alerts.forEach((alert) => addAlert(alert, false));
        S.live = true;
        S.retry = 0;
        render();
        document.body.dataset.overviewLive = "true";
      } else if (frame.kind === "rows") {
        applyRows(frame.rows);
      } else if (frame.kind === "alerts") {
        frame.alerts.forEach((alert) => addAlert(alert, false)); // the snapshot's later pages
      } else if (frame.kind === "alert") {
        addAlert(frame.alert, true);
      } else if (frame.kind === "alert_cleared") {
        clearAlert(frame.id, frame.sessionId);
      } else if (frame.kind === "pong") {
        S.offset = Date.parse(frame.asOf) - Date.now();
      }
    });
    socket.addEventListener("close", () => {
      if (S.socket !== socket) return;
      S.live = false;
      document.body.dataset.overviewLive = "false";
      liveText("Connection lost. Reconnecting…");
      const delay = Math.min(10000, 500 * Math.pow(2, S.retry));
      S.retry += 1;
      window.setTimeout(connect, delay);
    });
  }

  // --- controls --------------------------------------------------------------------------------
  function applyFilters() {
    S.filter = $("filter-show").value;
    S.query = $("filter-q").value;
    const params = new URLSearchParams();
    if (S.filter !== "all") params.set("show", S.filter);
    if (S.query) params.set("q", S.query);
    const query = params.toString();
    window.history.replaceState(null, "", query ? `?${query}` : window.location.pathname);
    render();
  }

  $("filter-show").addEventListener("change", applyFilters);
  $("filter-q").addEventListener("input", applyFilters);
  document.querySelector("form.filters").addEventListener("submit", (event) => {
    event.preventDefault();
    applyFilters();
  });
  const sound = $("alert-sound");
  sound.checked = window.localStorage.getItem(soundKey) === "1";
  sound.addEventListener("change", () => window.localStorage.setItem(soundKey, sound.checked ? "1" : "0"));

  window.setInterval(tick, 1000);
  window.setInterval(() => {
    if (S.socket && S.socket.readyState === WebSocket.OPEN) S.socket.send(JSON.stringify({ kind: "ping" }));
  }, 15000);

  // Test hook (docs/proctoring.md): the rows as the page has them.
  window.vivaOverview = {
    get live() {
      return S.live;
    },
    row(sessionId) {
      return S.rows.get(sessionId) || null;
    },
  };

  connect();
})();
