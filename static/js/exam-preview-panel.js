// The staff-only panel beside an author's exam-room preview (sessions.previews): polls the
// session's stored controller decisions over HTTP; nothing of it travels on the candidate socket.
(() => {
  "use strict";
  const panel = document.getElementById("preview-panel");
  if (!panel) return;
  const url = panel.dataset.decisionsUrl;
  const list = document.getElementById("preview-panel-decisions");
  const state = document.getElementById("preview-panel-state");
  const node = document.getElementById("preview-panel-node");
  let after = 0;
  let busy = false;

  async function poll() {
    if (busy) return;
    busy = true;
    try {
      const response = await fetch(`${url}?after=${after}`, { credentials: "same-origin" });
      if (!response.ok) return;
      const data = await response.json();
      state.textContent = data.state || "—";
      node.textContent = data.node || "—";
      for (const decision of data.decisions) {
        const item = document.createElement("li");
        item.dataset.type = decision.type;
        const kind = document.createElement("strong");
        kind.textContent = `#${decision.seq} ${decision.type}`;
        item.append(kind, document.createTextNode(decision.summary ? ` — ${decision.summary}` : ""));
        list.append(item);
      }
      after = data.lastSeq;
    } catch (error) {
      // The next poll tries again; the panel is a convenience, never the exam.
    } finally {
      busy = false;
    }
  }
  poll();
  window.setInterval(poll, 1500);
})();
