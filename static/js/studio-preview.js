// Studio preview: the author answers the saved draft as a candidate (text). Every answer or
// command is appended to the list of inputs and the whole list is replayed by the server
// (POST /api/v1/packages/<id>/preview/, nothing stored); the conversation and the controller's
// decisions and state come back and are shown side by side.
(function () {
  "use strict";
  const root = document.getElementById("preview");
  if (!root) return;
  const csrf = root.querySelector("input[name=csrfmiddlewaretoken]").value;
  // Translations: static/js/i18n.js (the page's JavaScript catalogue, English without it).
  const { gettext, tf } = window.vivaI18n;
  const conversation = document.getElementById("preview-conversation");
  const decisions = document.getElementById("preview-decisions");
  const stateBox = document.getElementById("preview-state");
  const status = document.getElementById("preview-status");
  const answer = document.getElementById("preview-answer");
  const send = document.getElementById("preview-send");
  let inputs = [];
  let started = Date.now();
  let busy = false;

  async function replay() {
    busy = true;
    send.disabled = true;
    status.textContent = gettext("The examiner is answering…");
    let response;
    try {
      response = await fetch(root.dataset.previewUrl, {
        method: "POST",
        credentials: "same-origin",
        headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrf },
        body: JSON.stringify({ inputs }),
      });
    } catch (e) {
      status.textContent = gettext("The server could not be reached; try again.");
      inputs.pop();
      busy = false;
      send.disabled = false;
      return;
    }
    const data = await response.json().catch(() => null);
    busy = false;
    send.disabled = false;
    if (!response.ok) {
      inputs.pop();
      status.textContent = (data && data.error && data.error.message) || tf(gettext("Preview failed (%(status)s)."), { status: response.status });
      return;
    }
    render(data);
  }

  function render(data) {
    conversation.replaceChildren();
    for (const line of data.conversation) {
      const item = document.createElement("li");
      item.className = "preview-line preview-" + line.speaker;
      const who = document.createElement("strong");
      who.textContent = (line.speaker === "examiner" ? gettext("Examiner:") : gettext("You:")) + " ";
      item.append(who, line.command ? "[" + line.command.replace(/_/g, " ") + "]" : line.text);
      conversation.append(item);
    }
    decisions.replaceChildren();
    for (const row of data.decisions) {
      if (!row.summary) continue;
      const item = document.createElement("li");
      item.textContent = "#" + row.seq + " " + row.summary;
      item.className = "decision decision-" + row.type;
      decisions.append(item);
    }
    const s = data.state;
    const rows = [
      [gettext("Node"), s.completed ? gettext("finished") : (s.nodeId || "–") + (s.nodeKind ? " (" + s.nodeKind + ")" : "")],
      [gettext("Evidence here"), !s.targets.length ? gettext("no targets")
        : s.covered.length ? tf(gettext("%(covered)s of %(targets)s: %(ids)s"), { covered: s.covered.length, targets: s.targets.length, ids: s.covered.join(", ") })
          : tf(gettext("%(covered)s of %(targets)s"), { covered: 0, targets: s.targets.length })],
      [gettext("Follow-ups"), tf(gettext("%(used)s of %(allowed)s"), { used: s.followUpsUsed, allowed: s.maxFollowUps })],
      [gettext("Time at node"), s.nodeElapsedSec === null ? "–" : s.nodeBudgetSec
        ? tf(gettext("%(elapsed)s s of %(budget)s s"), { elapsed: s.nodeElapsedSec, budget: s.nodeBudgetSec })
        : tf(gettext("%(elapsed)s s"), { elapsed: s.nodeElapsedSec })],
      [gettext("Next timer"), s.nextTimerInSec === null ? gettext("none") : tf(gettext("in %(seconds)s s"), { seconds: s.nextTimerInSec })],
      [gettext("Guardrails fired"), String(s.guardrails)],
    ];
    stateBox.replaceChildren();
    for (const [term, value] of rows) {
      const dt = document.createElement("dt");
      dt.textContent = term;
      const dd = document.createElement("dd");
      dd.textContent = value;
      stateBox.append(dt, dd);
    }
    status.textContent = s.completed ? gettext("The exam is over. Start again to try another path.") : gettext("Your turn.");
  }

  function push(input) {
    if (busy) return;
    inputs.push({ atMs: Math.max(inputs.length ? inputs[inputs.length - 1].atMs : 0, Date.now() - started), ...input });
    replay();
  }

  document.getElementById("preview-answer-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = answer.value.trim();
    if (!text) return;
    answer.value = "";
    push({ text });
    answer.focus();
  });
  for (const button of root.querySelectorAll("[data-command]")) {
    button.addEventListener("click", () => push({ command: button.dataset.command }));
  }
  document.getElementById("preview-restart").addEventListener("click", () => {
    inputs = [];
    started = Date.now();
    replay();
  });
  replay();
})();
