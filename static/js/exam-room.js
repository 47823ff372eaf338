/* The candidate's exam room (templates/sessions/exam_room.html; docs/exam-room.md).
 *
 * Live data: the session's WebSocket (sessions/consumers.py), ws/sessions/<id>/events/?after_seq=N.
 * The page replays the whole log on load and, after a dropped connection, reconnects with
 * after_seq = the highest seq it has shown: events at or below it (and any eventId already seen)
 * are ignored, so a reload or a reconnect loses nothing and shows nothing twice.
 *
 * Frames sent: {"kind":"ping"} (clock offset, liveness), {"kind":"candidate_ready"},
 * {"kind":"answer","text"} (text mode) and {"kind":"command","command":<chapter 05 envelope>}.
 * The page only ever receives the candidate projection of events (no evidence, rubric text,
 * scores or guardrail internals: the server never sends them to a candidate).
 *
 * Voice (mode "voice"): static/vendor/exam-room-voice.js (window.VivaExamVoice) carries audio over
 * SmallWebRTC or LiveKit; captions still come from the event socket.
 *
 * No inline script anywhere (CSP script-src 'self'); configuration arrives as JSON in
 * <script type="application/json" id="exam-room-config">.
 */
(function () {
  "use strict";

  const cfg = JSON.parse(document.getElementById("exam-room-config").textContent);
  const $ = (id) => document.getElementById(id);

  const TERMINAL = new Set(["completed", "aborted", "expired"]);
  const NOT_STARTED = new Set(["scheduled", "scaffolding", "ready"]);
  const COMMAND_LABELS = {
    repeat_question: "repeat the question",
    request_clarification: "explain the question",
    request_rephrase: "rephrase the question",
    thinking_aloud: "thinking aloud",
    pause: "pause the exam",
    resume: "resume the exam",
    raise_hand: "raise your hand",
    report_audio_issue: "report an audio problem",
    end_exam_requested: "end the exam",
    emergency_stop: "emergency stop",
  };
  const ACCEPTED_TEXT = {
    repeat_question: "The examiner will repeat the question.",
    request_clarification: "The examiner will explain the question.",
    request_rephrase: "The examiner will rephrase the question.",
    thinking_aloud: "The examiner knows you are thinking aloud and will wait.",
    pause: "The exam is paused.",
    resume: "The exam has resumed.",
    raise_hand: "Your proctor has been notified.",
    report_audio_issue: "Your audio problem has been reported.",
    end_exam_requested: "The exam is ending.",
    emergency_stop: "The exam has been stopped. Your proctor has been alerted.",
  };
  const CANONICAL_TO_ENVELOPE = {
    repeat: "repeat_question",
    clarification: "request_clarification",
    request_rephrase: "request_rephrase",
    thinking_aloud: "thinking_aloud",
    pause: "pause",
    resume: "resume",
    raise_hand: "raise_hand",
    report_audio_issue: "report_audio_issue",
    finish: "end_exam_requested",
    emergency_stop: "emergency_stop",
  };

  // --- state -------------------------------------------------------------------------------------
  const S = {
    lastSeq: 0,
    seen: new Set(), // eventIds shown (stored and live-only)
    live: false, // caught up with the log: announce new things from now on
    examState: cfg.state,
    botReady: false,
    readySent: false,
    nodeId: null,
    partIndex: -1,
    // clocks, in server milliseconds (event timestamps); now() = Date.now() + offset
    offset: 0,
    examBudgetMs: cfg.totalBudgetSec ? cfg.totalBudgetSec * 1000 : null,
    examActiveMs: 0,
    examSince: null,
    nodeBudgetMs: null,
    nodeActiveMs: 0,
    nodeSince: null,
    nodeWarned: false,
    recovering: new Set(),
    pendingCommands: new Map(), // commandId -> type
    pendingAnswers: [], // {key, li}
    utterances: new Map(), // utteranceId -> its transcript entry while being spoken
    socket: null,
    connected: false,
    everConnected: false,
    retry: 0,
    lastFrameAt: 0,
    outbox: [],
    finished: false,
    voice: null,
  };

  function serverNow() {
    return Date.now() + S.offset;
  }

  // --- announcements -----------------------------------------------------------------------------
  function announce(text, urgent) {
    // Each announcement is its own node in the live region (aria-relevant="additions"), so quick
    // successive ones ("Part 2 of 4", then the examiner's question) are all read; old ones go.
    const region = $(urgent ? "announce-urgent" : "announce-polite");
    const line = document.createElement("p");
    line.textContent = text;
    region.append(line);
    window.setTimeout(() => line.remove(), 15000);
  }

  // --- banner --------------------------------------------------------------------------------------
  function renderBanner() {
    const banner = $("banner");
    const text = $("banner-text");
    const resume = $("banner-resume");
    const done = $("banner-done");
    let message = "";
    let kind = "";
    resume.hidden = true;
    done.hidden = true;
    if (S.finished || TERMINAL.has(S.examState)) {
      kind = "finished";
      message =
        S.examState === "completed"
          ? "The exam has finished. Thank you."
          : S.examState === "expired"
            ? "The time for the exam is up. The exam has finished."
            : "The exam has been stopped.";
      done.hidden = false;
    } else if (!S.connected && S.everConnected) {
      kind = "reconnecting";
      message = "Connection lost. Reconnecting… Nothing you said or typed is lost.";
    } else if (S.examState === "paused") {
      kind = "paused";
      message = "The exam is paused. Both clocks have stopped. Resume when you are ready.";
      resume.hidden = false;
    } else if (S.recovering.size > 0) {
      kind = "recovering";
      message = "Taking a moment to get back on track. The examiner will guide you.";
    }
    banner.hidden = !message;
    banner.dataset.kind = kind;
    text.textContent = message;
  }

  // --- parts and timers ------------------------------------------------------------------------------
  function partOf(nodeId) {
    return cfg.parts.findIndex((p) => p.nodeIds.indexOf(nodeId) >= 0);
  }

  function renderPart() {
    const total = cfg.parts.length;
    if (S.partIndex < 0) {
      const over = S.finished || TERMINAL.has(S.examState);
      $("part-label").textContent = over ? "The exam is over" : S.nodeId ? "Closing" : "Not started";
      $("parts-remaining").textContent = total && !over ? `(${total} part${total === 1 ? "" : "s"})` : "";
      return;
    }
    const part = cfg.parts[S.partIndex];
    const remaining = total - (S.partIndex + 1);
    $("part-label").textContent = `Part ${part.number} of ${total}: ${part.label}`;
    $("parts-remaining").textContent =
      remaining === 0 ? "(last part)" : `(${remaining} more part${remaining === 1 ? "" : "s"} after this)`;
  }

  function fmt(ms) {
    if (ms === null || ms === undefined) return "--:--";
    const total = Math.max(0, Math.ceil(ms / 1000));
    const m = Math.floor(total / 60);
    const s = total % 60;
    return `${m}:${String(s).padStart(2, "0")}`;
  }

  function spoken(ms) {
    const total = Math.max(0, Math.round(ms / 1000));
    const m = Math.floor(total / 60);
    const s = total % 60;
    if (m && s) return `${m} minute${m === 1 ? "" : "s"} ${s} second${s === 1 ? "" : "s"}`;
    if (m) return `${m} minute${m === 1 ? "" : "s"}`;
    return `${s} second${s === 1 ? "" : "s"}`;
  }

  function examActive(at) {
    return S.examActiveMs + (S.examSince !== null ? Math.max(0, at - S.examSince) : 0);
  }

  function nodeActive(at) {
    return S.nodeActiveMs + (S.nodeSince !== null ? Math.max(0, at - S.nodeSince) : 0);
  }

  function renderTimers() {
    const now = serverNow();
    const started = S.examSince !== null || S.examActiveMs > 0;
    const examLeft = S.examBudgetMs !== null && started ? S.examBudgetMs - examActive(now) : null;
    const nodeLeft = S.nodeBudgetMs ? S.nodeBudgetMs - nodeActive(now) : null;
    $("exam-timer").textContent = fmt(examLeft);
    $("node-timer").textContent = fmt(nodeLeft);
    $("exam-timer-box").classList.toggle("is-low", examLeft !== null && examLeft <= 120000);
    $("node-timer-box").classList.toggle("is-low", nodeLeft !== null && nodeLeft <= 60000);
    if (nodeLeft !== null && nodeLeft <= 60000 && nodeLeft > 0 && !S.nodeWarned && S.live && S.nodeSince !== null) {
      S.nodeWarned = true;
      announce("About one minute left in this part.");
    }
  }

  function pauseClocks(at) {
    if (S.examSince !== null) {
      S.examActiveMs += Math.max(0, at - S.examSince);
      S.examSince = null;
    }
    if (S.nodeSince !== null) {
      S.nodeActiveMs += Math.max(0, at - S.nodeSince);
      S.nodeSince = null;
    }
  }

  function runClocks(at) {
    if (S.examSince === null) S.examSince = at;
    if (S.nodeId !== null && S.nodeSince === null && S.nodeBudgetMs !== null) S.nodeSince = at;
  }

  // --- transcript ------------------------------------------------------------------------------------
  function addTurn(speaker, text, extraClass) {
    const li = document.createElement("li");
    li.className = `turn turn-${speaker}${extraClass ? " " + extraClass : ""}`;
    const who = document.createElement("p");
    who.className = "turn-who";
    who.textContent = speaker === "examiner" ? cfg.examinerName : "You";
    const said = document.createElement("p");
    said.className = "turn-text";
    said.textContent = text;
    li.append(who, said);
    $("transcript").append(li);
    if (S.live) li.scrollIntoView({ block: "nearest" });
    return li;
  }

  function norm(text) {
    return String(text || "").replace(/\s+/g, " ").trim();
  }

  function candidateTurn(text) {
    const key = norm(text);
    const index = S.pendingAnswers.findIndex((p) => p.key === key);
    if (index >= 0) {
      const pending = S.pendingAnswers.splice(index, 1)[0];
      pending.li.classList.remove("is-pending");
      const note = pending.li.querySelector(".turn-note");
      if (note) note.remove();
      return;
    }
    addTurn("candidate", text);
  }

  // --- the view as a whole ---------------------------------------------------------------------------
  function render() {
    const state = S.examState;
    const over = S.finished || TERMINAL.has(state);
    const started = !NOT_STARTED.has(state) || over;
    $("waiting").hidden = started;
    $("answer-area").hidden = !started || over;
    $("requests").hidden = !started || over;
    const start = $("start-exam");
    const voiceReady = cfg.mode !== "voice" || (S.voice && S.voice.connected);
    start.hidden = !(S.botReady && !started) || state === "ready";
    start.disabled = S.readySent || !voiceReady;
    if (!started) {
      $("waiting-text").textContent = state === "ready"
        ? "You are ready. Your proctor will start the exam in a moment."
        : S.readySent
        ? "Starting the exam…"
        : S.botReady
          ? voiceReady
            ? "The examiner is ready. Start when you are ready."
            : "The examiner is ready. Connecting your audio…"
          : "The examiner is getting ready. This usually takes a few seconds.";
    }
    const paused = state === "paused";
    const allowed = new Set(S.nodeId ? cfg.nodeCommands[S.nodeId] || [] : []);
    document.querySelectorAll("#requests [data-command]").forEach((button) => {
      const type = button.dataset.command;
      let show = true;
      if (type in { repeat_question: 1, request_clarification: 1, request_rephrase: 1, thinking_aloud: 1 }) {
        show = !paused && allowed.has(type);
      } else if (type === "pause") {
        show = !paused;
      } else if (type === "resume") {
        show = paused;
      }
      button.hidden = !show;
      button.disabled = !S.connected;
    });
    const answer = $("answer");
    if (answer) {
      const canAnswer = state === "in_progress" && S.connected;
      answer.disabled = state !== "in_progress";
      $("send-answer").disabled = !canAnswer;
      $("answer-hint").textContent =
        state === "paused"
          ? "The exam is paused. Resume it to answer."
          : "Press Ctrl+Enter or the button to send. You can send your answer in several parts.";
    }
    renderPart();
    renderBanner();
    renderTimers();
  }

  // --- events ------------------------------------------------------------------------------------------
  function handleEvent(event) {
    if (event.seq !== undefined && event.seq !== null) {
      if (event.seq <= S.lastSeq) return; // replayed or repaired: already shown
      S.lastSeq = event.seq;
    }
    if (event.type === "heartbeat") {
      const at = Date.parse(event.timestamp);
      if (!Number.isNaN(at)) S.offset = at - Date.now();
      return;
    }
    if (S.seen.has(event.eventId)) return;
    S.seen.add(event.eventId);
    const at = Date.parse(event.timestamp);
    const p = event.payload || {};
    switch (event.type) {
      case "bot_ready":
        S.botReady = true;
        if (p.estimatedDurationSec) S.examBudgetMs = Math.round(p.estimatedDurationSec * 1000);
        if (S.live && NOT_STARTED.has(S.examState)) announce("The examiner is ready. You can start the exam.");
        break;
      case "exam_state_changed":
        onStateChange(p.fromState, p.toState, at);
        break;
      case "node_entered":
        S.nodeId = p.nodeId;
        S.nodeBudgetMs = p.timeBudgetMs || (p.timeBudgetSec ? p.timeBudgetSec * 1000 : 0) || null;
        S.nodeActiveMs = 0;
        S.nodeSince = S.examSince !== null && S.nodeBudgetMs ? at : null;
        S.nodeWarned = false;
        S.partIndex = partOf(p.nodeId);
        S.recovering.clear();
        if (S.live && S.partIndex >= 0) {
          const part = cfg.parts[S.partIndex];
          announce(`Part ${part.number} of ${cfg.parts.length}: ${part.label}.`);
        }
        break;
      case "node_exited":
        break;
      case "examiner_utterance_started":
        // The turn takes its place in the transcript when the examiner starts speaking (in voice
        // mode the final text comes when the speech ends, possibly after the candidate spoke).
        $("speaking").hidden = false;
        if (!S.utterances.has(p.utteranceId)) {
          const li = addTurn("examiner", "…", "is-pending");
          S.utterances.set(p.utteranceId, li);
        }
        break;
      case "examiner_utterance_final": {
        $("speaking").hidden = true;
        $("caption").textContent = p.text;
        const li = S.utterances.get(p.utteranceId);
        if (li) {
          li.classList.remove("is-pending");
          li.querySelector(".turn-text").textContent = p.text;
        } else {
          addTurn("examiner", p.text);
        }
        S.utterances.set(p.utteranceId, null);
        if (S.live) announce(`${cfg.examinerName}: ${p.text}`);
        break;
      }
      case "transcript_delta":
        // Live-only partials: the candidate's words as they are recognised; the examiner's words
        // as they are spoken, when the bot sends them (the caption does not wait for the end).
        if (p.speaker === "candidate" && $("live-caption")) $("live-caption").textContent = p.text;
        if (p.speaker === "examiner") $("caption").textContent = p.text;
        break;
      case "transcript_final":
        if (p.speaker === "candidate") {
          if ($("live-caption")) $("live-caption").textContent = "";
          candidateTurn(p.text);
        }
        break;
      case "candidate_command_received":
        onCommandAck(p);
        break;
      case "time_warning":
        onTimeWarning(p, at);
        break;
      case "recovery_started":
        S.recovering.add(p.recoveryId);
        break;
      case "recovery_resolved":
        S.recovering.delete(p.recoveryId);
        break;
      case "system_error":
        if (p.userMessage && S.live) {
          $("request-feedback").textContent = p.userMessage;
          if (p.severity === "fatal") announce(p.userMessage, true);
        }
        break;
      case "exam_completed":
        S.finished = true;
        pauseClocks(at);
        break;
      default:
        break;
    }
    render();
  }

  function onStateChange(from, to, at) {
    const previous = S.examState;
    S.examState = to;
    if (to === "in_progress") runClocks(at);
    else pauseClocks(at);
    if (TERMINAL.has(to)) S.finished = true;
    if (!S.live) return;
    if (to === "paused") announce("The exam is paused. Both clocks have stopped.", true);
    else if (to === "in_progress" && previous === "paused") announce("The exam has resumed.");
    else if (to === "in_progress") announce("The exam has started.");
    else if (TERMINAL.has(to)) {
      announce("The exam has finished. Use the button to continue to the completion page.", true);
      window.setTimeout(() => $("banner-done").focus(), 100);
    }
  }

  function onTimeWarning(p, at) {
    const remaining = p.remainingMs !== undefined ? p.remainingMs : (p.remainingSec || 0) * 1000;
    if (p.scope === "node") {
      S.nodeBudgetMs = nodeActive(at) + remaining;
    } else {
      S.examBudgetMs = examActive(at) + remaining;
    }
    if (!S.live) return;
    const where = p.scope === "node" ? "in this part" : "in the exam";
    const extra = p.wrapUp ? " The examiner will now move to the final part." : "";
    announce(`${spoken(remaining)} left ${where}.${extra}`);
  }

  function onCommandAck(p) {
    const mine = S.pendingCommands.has(p.commandId);
    const type = mine ? S.pendingCommands.get(p.commandId) : CANONICAL_TO_ENVELOPE[p.command];
    S.pendingCommands.delete(p.commandId);
    if (!S.live || !type) return;
    const label = COMMAND_LABELS[type] || p.command;
    const text = p.accepted
      ? ACCEPTED_TEXT[type] || `Your request to ${label} was received.`
      : `Your request to ${label} is not available right now.`;
    $("request-feedback").textContent = text; // a status region: read by itself
  }

  // --- the socket ---------------------------------------------------------------------------------------
  function socketUrl() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${window.location.host}${cfg.socketPath}?after_seq=${S.lastSeq}`;
  }

  function connect() {
    let socket;
    try {
      socket = new WebSocket(socketUrl());
    } catch (error) {
      scheduleReconnect();
      return;
    }
    S.socket = socket;
    socket.addEventListener("open", () => {
      S.lastFrameAt = Date.now();
    });
    socket.addEventListener("message", (message) => {
      S.lastFrameAt = Date.now();
      let frame;
      try {
        frame = JSON.parse(message.data);
      } catch (error) {
        return;
      }
      if (frame.kind === "event") handleEvent(frame.event);
      else if (frame.kind === "caught_up") onCaughtUp();
      else if (frame.kind === "error") onSocketError(frame);
    });
    socket.addEventListener("close", () => {
      if (S.socket !== socket) return;
      S.socket = null;
      const wasConnected = S.connected;
      S.connected = false;
      S.live = false;
      render();
      if (wasConnected && !S.finished) announce("Connection lost. Reconnecting.", true);
      if (!TERMINAL.has(S.examState)) scheduleReconnect();
    });
  }

  function onCaughtUp() {
    const reconnected = S.everConnected;
    S.connected = true;
    S.everConnected = true;
    S.live = true;
    S.retry = 0;
    send({ kind: "ping" });
    while (S.outbox.length) send(S.outbox.shift());
    render();
    if (reconnected) announce("Connection restored.");
    if (S.finished) $("banner-done").focus();
  }

  function onSocketError(frame) {
    if (frame.code === "after_seq") {
      // The log is shorter than what this page has seen (it cannot be); start over cleanly.
      window.location.reload();
      return;
    }
    $("request-feedback").textContent = "Something you sent was not understood. Please try again.";
  }

  function scheduleReconnect() {
    const delay = Math.min(10000, 500 * Math.pow(2, S.retry));
    S.retry += 1;
    window.setTimeout(connect, delay);
  }

  function send(frame) {
    if (S.socket && S.connected && S.socket.readyState === WebSocket.OPEN) {
      S.socket.send(JSON.stringify(frame));
      return true;
    }
    if (frame.kind !== "ping") S.outbox.push(frame); // never sent yet: sent once reconnected
    return false;
  }

  // Liveness: ping every 10 s; a socket silent for 35 s is treated as dropped.
  window.setInterval(() => {
    if (!S.socket || !S.connected) return;
    if (Date.now() - S.lastFrameAt > 35000) {
      S.socket.close();
      return;
    }
    send({ kind: "ping" });
  }, 10000);
  window.setInterval(renderTimers, 1000);

  // --- commands ------------------------------------------------------------------------------------------
  function uuid7() {
    const bytes = new Uint8Array(16);
    window.crypto.getRandomValues(bytes);
    let ms = Date.now();
    for (let i = 5; i >= 0; i -= 1) {
      bytes[i] = ms % 256;
      ms = Math.floor(ms / 256);
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x70;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  }

  function sendCommand(type, extra) {
    const payload = Object.assign({ type }, extra || {});
    if (type in { repeat_question: 1, request_clarification: 1, request_rephrase: 1, thinking_aloud: 1 }) {
      payload.nodeId = S.nodeId;
    }
    const command = {
      commandId: uuid7(),
      sessionId: cfg.sessionId,
      timestamp: new Date().toISOString(),
      source: "candidate",
      type,
      payload,
      schemaVersion: "1",
    };
    S.pendingCommands.set(command.commandId, type);
    const sent = send({ kind: "command", command });
    const text = sent
      ? `Sent: ${COMMAND_LABELS[type]}…`
      : `Not connected. Your request to ${COMMAND_LABELS[type]} will be sent when the connection is back.`;
    $("request-feedback").textContent = text; // a status region: read by itself
  }

  function openDialog(id) {
    const dialog = $(id);
    if (typeof dialog.showModal === "function") dialog.showModal();
    else dialog.setAttribute("open", "");
  }

  function closeDialog(id, returnTo) {
    const dialog = $(id);
    if (typeof dialog.close === "function") dialog.close();
    else dialog.removeAttribute("open");
    if (returnTo) returnTo.focus();
  }

  document.querySelectorAll("#requests [data-command]").forEach((button) => {
    button.addEventListener("click", () => {
      const type = button.dataset.command;
      if (type === "end_exam_requested") openDialog("end-dialog");
      else if (type === "emergency_stop") openDialog("stop-dialog");
      else if (type === "report_audio_issue") openDialog("audio-dialog");
      else if (type === "pause") sendCommand("pause", { reason: "personal" });
      else sendCommand(type);
    });
  });
  $("banner-resume").addEventListener("click", () => sendCommand("resume"));
  const endButton = document.querySelector('[data-command="end_exam_requested"]');
  const stopButton = document.querySelector('[data-command="emergency_stop"]');
  $("end-confirm").addEventListener("click", () => {
    closeDialog("end-dialog");
    sendCommand("end_exam_requested", { requestedBy: "candidate" });
  });
  $("end-cancel").addEventListener("click", () => closeDialog("end-dialog", endButton));
  $("stop-confirm").addEventListener("click", () => {
    closeDialog("stop-dialog");
    sendCommand("emergency_stop", { reason: "distress" });
  });
  $("stop-cancel").addEventListener("click", () => closeDialog("stop-dialog", stopButton));
  const audioButton = document.querySelector('[data-command="report_audio_issue"]');
  if (audioButton) {
    $("audio-send").addEventListener("click", () => {
      const checked = document.querySelector('#audio-form input[name="issue"]:checked');
      closeDialog("audio-dialog", audioButton);
      sendCommand("report_audio_issue", { issueType: checked ? checked.value : "no_input", severity: "major" });
    });
    $("audio-cancel").addEventListener("click", () => closeDialog("audio-dialog", audioButton));
  }

  // --- starting the exam ------------------------------------------------------------------------------------
  $("start-exam").addEventListener("click", () => {
    if (S.readySent) return;
    S.readySent = true;
    send({ kind: "candidate_ready" });
    render();
    announce("Starting the exam.");
    window.setTimeout(() => {
      // No answer from the examiner: let the candidate try again.
      if (NOT_STARTED.has(S.examState)) {
        S.readySent = false;
        render();
      }
    }, 15000);
  });

  // --- typed answers -----------------------------------------------------------------------------------------
  const form = $("answer-form");
  if (form) {
    const box = $("answer");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = box.value.trim();
      if (!text || S.examState !== "in_progress") return;
      const li = addTurn("candidate", text, "is-pending");
      const note = document.createElement("p");
      note.className = "turn-note hint";
      note.textContent = "Sending…";
      li.append(note);
      li.scrollIntoView({ block: "nearest" });
      S.pendingAnswers.push({ key: norm(text), li });
      send({ kind: "answer", text });
      box.value = "";
      box.focus();
      announce("Answer sent.");
    });
    box.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
  }

  // --- text size -----------------------------------------------------------------------------------------------
  const sizeButton = $("text-size");
  const applySize = (large) => {
    document.documentElement.classList.toggle("text-large", large);
    sizeButton.setAttribute("aria-pressed", large ? "true" : "false");
  };
  applySize(window.localStorage.getItem("viva-text-large") === "1");
  sizeButton.addEventListener("click", () => {
    const large = sizeButton.getAttribute("aria-pressed") !== "true";
    applySize(large);
    window.localStorage.setItem("viva-text-large", large ? "1" : "0");
  });

  // --- voice -------------------------------------------------------------------------------------------------------
  function startVoice() {
    if (cfg.mode !== "voice" || !cfg.voice) return;
    const status = $("voice-status");
    status.hidden = false;
    if (!window.VivaExamVoice) {
      status.textContent = "Audio could not be loaded. Tell your proctor.";
      return;
    }
    S.voice = window.VivaExamVoice.create({
      transport: cfg.voice.transport,
      offerUrl: cfg.voice.offer,
      tokenUrl: cfg.voice.livekitToken,
      audioElement: $("examiner-audio"),
      csrfToken: csrfToken(),
      onState: (state, detail) => {
        const text = {
          connecting: "Connecting your audio…",
          connected: "Audio connected.",
          reconnecting: "Audio connection lost. Reconnecting…",
          failed: `Audio could not connect${detail ? ` (${detail})` : ""}. Use "Reconnect audio", or tell your proctor.`,
        }[state];
        status.textContent = text || "";
        $("mic-state").textContent = state === "connected" ? "Microphone: on" : `Microphone: ${state}`;
        $("voice-reconnect").hidden = state !== "failed";
        render();
      },
      onLevel: (level) => {
        const meter = $("voice-level");
        meter.value = Math.round(level * 100);
        meter.textContent = `${Math.round(level * 100)}%`;
      },
    });
    S.voice.connect();
    $("voice-reconnect").addEventListener("click", () => S.voice.connect());
  }

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  // Test hook (documented in docs/exam-room.md): how far the page has got, for browser tests.
  window.vivaExamRoom = {
    get lastSeq() {
      return S.lastSeq;
    },
    get live() {
      return S.live;
    },
    get state() {
      return S.examState;
    },
    dropConnection() {
      if (S.socket) S.socket.close(); // as a network drop would: the page reconnects by itself
    },
  };

  render();
  connect();
  startVoice();
})();
