/* The candidate's exam room (templates/sessions/exam_room.html; docs/exam-room.md).
 *
 * Live data: the session's WebSocket (sessions/consumers.py), ws/sessions/<id>/events/?after_seq=N.
 * The page replays the whole log on load and, after a dropped connection, reconnects with
 * after_seq = the highest seq it has shown: events at or below it (and any eventId already seen)
 * are ignored, so a reload or a reconnect loses nothing and shows nothing twice. What the events
 * mean for the page (state, part, clocks, transcript, what to announce) is folded by the pure
 * static/js/events/exam-room.js (loaded before this file; unit-tested in frontend/test/events);
 * this file only shows it, and keeps the connection and the candidate's inputs.
 *
 * Frames sent: {"kind":"ping"} (clock offset, liveness), {"kind":"candidate_ready","id"},
 * {"kind":"answer","id","text"} (text mode; voice once the recogniser is replaced by typing), {"kind":"correction","id","turnIds"?,"text"} (voice: the
 * candidate's answer to a recognition check) and {"kind":"command","command":<chapter 05 envelope>}.
 * Every input carries a client-generated id (a command its commandId) and counts as sent only
 * when the server's {"kind":"ack","id"} says it is stored (sessions/inbox.py): until then it is
 * kept (also in sessionStorage, so a reload keeps it) and sent again on every reconnect and every
 * few seconds; the server drops repeats by id.
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
  // Translations: static/js/i18n.js (the page's JavaScript catalogue, English without it).
  const { gettext, ngettext, tf } = window.vivaI18n;
  const minutes = (n) => tf(ngettext("%(n)s minute", "%(n)s minutes", n), { n });
  const seconds = (n) => tf(ngettext("%(n)s second", "%(n)s seconds", n), { n });
  const MIC_STATES = {
    connecting: gettext("connecting"),
    reconnecting: gettext("reconnecting"),
    failed: gettext("failed"),
    off: gettext("off"),
  };

  const TERMINAL = new Set(["completed", "aborted", "expired"]);
  const NOT_STARTED = new Set(["scheduled", "scaffolding", "ready"]);
  // A candidate never waits in silence: when the examiner is not ready this long after the room
  // opened (no bot could be started: no worker, a provider that refuses), the page says so.
  const BOT_START_PATIENCE_MS = 20000;
  const COMMAND_LABELS = {
    repeat_question: gettext("repeat the question"),
    request_clarification: gettext("explain the question"),
    request_rephrase: gettext("rephrase the question"),
    thinking_aloud: gettext("thinking aloud"),
    pause: gettext("pause the exam"),
    resume: gettext("resume the exam"),
    raise_hand: gettext("raise your hand"),
    report_audio_issue: gettext("report an audio problem"),
    end_exam_requested: gettext("end the exam"),
    emergency_stop: gettext("emergency stop"),
  };
  const ACCEPTED_TEXT = {
    repeat_question: gettext("The examiner will repeat the question."),
    request_clarification: gettext("The examiner will explain the question."),
    request_rephrase: gettext("The examiner will rephrase the question."),
    thinking_aloud: gettext("The examiner knows you are thinking aloud and will wait."),
    pause: gettext("The exam is paused."),
    resume: gettext("The exam has resumed."),
    raise_hand: gettext("Your proctor has been notified."),
    report_audio_issue: gettext("Your audio problem has been reported."),
    end_exam_requested: gettext("The exam is ending."),
    emergency_stop: gettext("The exam has been stopped. Your proctor has been alerted."),
  };
  // The commands offered only where the node's policy allows them (sessions.exam_room owns the list).
  const NODE_GATED = new Set(cfg.nodeGatedCommands || []);
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
  // What the event log says (exam state, part, clocks in server milliseconds, recoveries,
  // captions) is folded by static/js/events/exam-room.js: S.view, never changed in place. The
  // rest is this page's: the connection, inputs waiting for their ack, the transcript's elements.
  const events = window.VivaEvents;
  const S = {
    view: events.examRoom.initial(cfg.state, cfg.totalBudgetSec),
    live: false, // caught up with the log: announce new things from now on
    botLate: false, // the examiner did not get ready within BOT_START_PATIENCE_MS
    botWait: null, // then: why, from the server (every examiner busy and the place, or none running)
    readySent: false,
    warnedEntry: 0, // the node entry (view.nodeEntry) the one-minute warning was given for
    pendingCommands: new Map(), // commandId -> type
    pendingAnswers: [], // {key, li, id}
    unacked: new Map(), // input id -> {frame, sentAt}: inputs not yet stored by the server
    turns: new Map(), // transcript key (view out) -> its <li>
    socket: null,
    connected: false,
    everConnected: false,
    retry: 0,
    lastFrameAt: 0,
    outbox: [],
    finished: false,
    voice: null,
    pausedBy: null, // who holds a pause (static/js/events/exam-room.js): proctor, system, recognition
    draftNode: null, // the part the text in the answer box was written for
    correction: null, // the correction sent for the open recognition check: {id, acked} (voice)
  };

  function serverNow() {
    return Date.now() + S.view.offset;
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
    if (S.view.finished || TERMINAL.has(S.view.examState)) {
      kind = "finished";
      message =
        S.view.examState === "completed"
          ? gettext("The exam has finished. Thank you.")
          : S.view.examState === "expired"
            ? gettext("The time for the exam is up. The exam has finished.")
            : gettext("The exam has been stopped.");
      done.hidden = false;
    } else if (!S.connected && S.everConnected) {
      kind = "reconnecting";
      message = gettext("Connection lost. Reconnecting… Nothing you said or typed is lost.");
    } else if (S.view.examState === "paused" && S.view.pausedBy === "proctor") {
      kind = "paused";
      message = gettext("Your proctor paused the exam. Both clocks have stopped. Only your proctor can resume it: please wait.");
    } else if (S.view.examState === "paused" && S.view.pausedBy === "system") {
      kind = "paused";
      message = gettext("The exam is paused for a technical problem on our side. Both clocks have stopped and there is nothing you need to do: it continues by itself.");
    } else if (S.view.examState === "paused" && S.view.pausedBy === "recognition") {
      kind = "paused";
      message = gettext("The exam is paused because the examiner could not hear you clearly. Both clocks have stopped. Start speaking again when you are ready, or press “Resume the exam”.");
      resume.hidden = false;
    } else if (S.view.examState === "paused") {
      kind = "paused";
      message = gettext("The exam is paused. Both clocks have stopped. Resume when you are ready.");
      resume.hidden = false;
    } else if (S.view.recovering.size > 0) {
      kind = "recovering";
      message = gettext("Taking a moment to get back on track. The examiner will guide you.");
    }
    banner.hidden = !message;
    banner.dataset.kind = kind;
    text.textContent = message;
  }

  // --- parts and timers ------------------------------------------------------------------------------
  function renderPart() {
    const total = cfg.parts.length;
    if (S.view.partIndex < 0) {
      const over = S.view.finished || TERMINAL.has(S.view.examState);
      $("part-label").textContent = over ? gettext("The exam is over") : S.view.nodeId ? gettext("Closing") : gettext("Not started");
      $("parts-remaining").textContent = total && !over ? tf(ngettext("(%(n)s part)", "(%(n)s parts)", total), { n: total }) : "";
      return;
    }
    const part = cfg.parts[S.view.partIndex];
    const remaining = total - (S.view.partIndex + 1);
    $("part-label").textContent = tf(gettext("Part %(number)s of %(total)s: %(label)s"), { number: part.number, total, label: part.label });
    $("parts-remaining").textContent =
      remaining === 0 ? gettext("(last part)") : tf(ngettext("(%(n)s more part after this)", "(%(n)s more parts after this)", remaining), { n: remaining });
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
    if (m && s) return `${minutes(m)} ${seconds(s)}`;
    if (m) return minutes(m);
    return seconds(s);
  }

  function renderTimers() {
    const now = serverNow();
    const view = S.view;
    const started = view.exam.since !== null || view.exam.active > 0;
    const examLeft = started ? events.log.remaining(view.exam, now) : null;
    const nodeLeft = view.node.budget ? events.log.remaining(view.node, now) : null;
    $("exam-timer").textContent = fmt(examLeft);
    $("node-timer").textContent = fmt(nodeLeft);
    $("exam-timer-box").classList.toggle("is-low", examLeft !== null && examLeft <= 120000);
    $("node-timer-box").classList.toggle("is-low", nodeLeft !== null && nodeLeft <= 60000);
    const warned = S.warnedEntry === view.nodeEntry;
    if (nodeLeft !== null && nodeLeft <= 60000 && nodeLeft > 0 && !warned && S.live && view.node.since !== null) {
      S.warnedEntry = view.nodeEntry;
      announce(gettext("About one minute left in this part."));
    }
  }

  // --- transcript ------------------------------------------------------------------------------------
  function addTurn(speaker, text, extraClass) {
    const li = document.createElement("li");
    li.className = `turn turn-${speaker}${extraClass ? " " + extraClass : ""}`;
    const who = document.createElement("p");
    who.className = "turn-who";
    who.textContent = speaker === "examiner" ? cfg.examinerName : gettext("You");
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

  // The candidate's words as stored: the typed answer already on screen (sent, not yet stored)
  // becomes it; anything else (spoken, typed in another tab) is added.
  function candidateTurn(turnKey, text) {
    const key = norm(text);
    const index = S.pendingAnswers.findIndex((p) => p.key === key);
    if (index >= 0) {
      const pending = S.pendingAnswers.splice(index, 1)[0];
      pending.li.classList.remove("is-pending");
      const note = pending.li.querySelector(".turn-note");
      if (note) note.remove();
      S.turns.set(turnKey, pending.li);
      return;
    }
    S.turns.set(turnKey, addTurn("candidate", text));
  }

  // --- the view as a whole ---------------------------------------------------------------------------
  function render() {
    const state = S.view.examState;
    const over = S.view.finished || TERMINAL.has(state);
    const started = !NOT_STARTED.has(state) || over;
    $("waiting").hidden = started;
    $("answer-area").hidden = !started || over;
    $("requests").hidden = !started || over;
    const start = $("start-exam");
    const voiceReady = cfg.mode !== "voice" || (S.voice && S.voice.connected);
    start.hidden = !(S.view.botReady && !started) || state === "ready";
    start.disabled = S.readySent || !voiceReady;
    if (!started) {
      $("waiting-text").textContent = state === "ready"
        ? gettext("You are ready. Your proctor will start the exam in a moment.")
        : S.readySent
        ? gettext("Starting the exam…")
        : S.view.botReady
          ? voiceReady
            ? gettext("The examiner is ready. Start when you are ready.")
            : gettext("The examiner is ready. Connecting your audio…")
          : S.botLate
            ? S.botWait || gettext("The examiner is taking longer than usual to start. Please stay on this page: it starts by itself as soon as it can. If nothing changes within a few minutes, contact your proctor or the exam support.")
            : gettext("The examiner is getting ready. This usually takes a few seconds.");
    }
    const paused = state === "paused";
    const allowed = new Set(S.view.nodeId ? cfg.nodeCommands[S.view.nodeId] || [] : []);
    document.querySelectorAll("#requests [data-command]").forEach((button) => {
      const type = button.dataset.command;
      let show = true;
      if (NODE_GATED.has(type)) {
        show = !paused && allowed.has(type);
      } else if (type === "pause") {
        show = !paused;
      } else if (type === "resume") {
        show = paused && S.view.pausedBy !== "proctor" && S.view.pausedBy !== "system";
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
          ? gettext("The exam is paused. Resume it to answer.")
          : gettext("Press Ctrl+Enter or the button to send. You can send your answer in several parts.");
    }
    if (S.view.check && $("recognition-check")) renderCorrection(); // "Sending…" / "Not connected"
    renderConfirm(false);
    renderPart();
    renderBanner();
    renderTimers();
  }

  // --- events ------------------------------------------------------------------------------------------
  // The view is folded by static/js/events/exam-room.js; here it is only shown: the transcript
  // turns and announcements the fold lists (`out`), then the page as a whole (render()).
  function handleEvent(event) {
    const before = S.view;
    const { state, out } = events.examRoom.step(before, event, { now: Date.now(), parts: cfg.parts });
    if (state === before) return; // already shown, or unreadable
    S.view = state;
    out.forEach(show);
    if (state.nodeId !== before.nodeId) noteDraftOfAnotherPart();
    if (state.speaking !== before.speaking) $("speaking").hidden = !state.speaking;
    if (state.caption !== before.caption) $("caption").textContent = state.caption;
    if (state.liveCaption !== before.liveCaption && $("live-caption")) $("live-caption").textContent = state.liveCaption;
    if (state.check !== before.check) renderCheck();
    render();
    if (state.confirming !== before.confirming) renderConfirm(true);
  }

  // --- recognition checks (voice; issue 30): confirm or type what the recogniser misheard -----------
  // S.correction is the correction sent for the open check ({id, acked}) or null: the buttons are
  // disabled until its ack, then the region shows it as sent (its actions hidden) until the events
  // (transcript_corrected, or the candidate saying it again) close the check.
  function renderCheck() {
    const box = $("recognition-check");
    if (!box) return;
    const check = S.view.check;
    if (!check) {
      closeCheck(box);
      return;
    }
    const heard = check.heard;
    const intro = $("recognition-intro");
    intro.textContent = heard ? intro.dataset.heard : intro.dataset.unheard;
    $("recognition-heard").textContent = heard;
    $("recognition-heard").hidden = !heard;
    $("recognition-confirm").hidden = !heard;
    $("recognition-text").value = heard;
    S.correction = waitingCorrection();
    box.hidden = false;
    renderCorrection();
    if (S.live) $("recognition-heading").focus();
  }

  function closeCheck(box) {
    const hadFocus = box.contains(document.activeElement);
    box.hidden = true;
    S.correction = null;
    if (hadFocus) $("transcript").focus(); // where the correction (or the new answer) now is
  }

  // A correction sent before a reload and not acknowledged yet (kept with the unacked inputs).
  function waitingCorrection() {
    for (const [id, entry] of S.unacked) if (entry.frame.kind === "correction") return { id, acked: false };
    return null;
  }

  function correctionStatus() {
    if (!S.correction) return "";
    if (S.correction.acked) return gettext("Sent. The examiner will go on from your words.");
    return S.connected ? gettext("Sending…") : gettext("Not connected. Your correction will be sent when the connection is back.");
  }

  function renderCorrection() {
    const busy = Boolean(S.correction);
    $("recognition-actions").hidden = busy && S.correction.acked;
    $("recognition-confirm").disabled = busy;
    $("recognition-send").disabled = busy;
    const status = $("recognition-status");
    const text = correctionStatus();
    if (status.textContent !== text) status.textContent = text; // a status region: read when it changes
  }

  // The runtime refused the correction sent (the exam had moved on from that answer, or it was
  // corrected already): the check, if still open, takes a new one, and the page says why.
  function correctionRefused() {
    if (!S.live) return;
    const why = gettext("Your correction could not be used: the exam had already moved on from that answer, or it had been corrected already. Your words are kept in the record. If the examiner is waiting for an answer, say it again or type it.");
    if (S.view.check && S.correction) {
      S.correction = null;
      renderCorrection();
      $("recognition-status").textContent = why;
    } else {
      $("request-feedback").textContent = why;
    }
    announce(why);
  }

  function sendCorrection(text) {
    const check = S.view.check;
    const words = String(text || "").trim();
    if (!check || S.correction) return;
    if (!words) {
      $("recognition-status").textContent = gettext("Type what you said first.");
      $("recognition-text").focus();
      return;
    }
    const frame = { kind: "correction", id: uuid7(), text: words };
    // Every misheard piece the check named: the words typed (or confirmed) replace them all.
    if (check.turnIds.length) frame.turnIds = [...check.turnIds];
    S.correction = { id: frame.id, acked: false };
    sendInput(frame);
    $("recognition-heading").focus(); // the actions are disabled, then hidden: focus stays in the check
    renderCorrection();
  }

  function correctionAcked(id) {
    if (!S.correction || S.correction.id !== id) return;
    S.correction = { id, acked: true };
    renderCorrection();
  }

  if ($("recognition-check")) {
    $("recognition-confirm").addEventListener("click", () => sendCorrection(S.view.check && S.view.check.heard));
    $("recognition-send").addEventListener("click", () => sendCorrection($("recognition-text").value));
    $("recognition-text").addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        sendCorrection($("recognition-text").value);
      }
    });
  }

  function show(item) {
    switch (item.kind) {
      case "turn":
        if (item.speaker === "candidate") candidateTurn(item.key, item.text);
        else S.turns.set(item.key, addTurn("examiner", item.text, item.pending ? "is-pending" : ""));
        break;
      case "turn_text": {
        const li = S.turns.get(item.key);
        if (!li) break;
        li.classList.remove("is-pending");
        li.querySelector(".turn-text").textContent = item.text;
        break;
      }
      case "superseded": {
        const li = S.turns.get(item.key);
        if (!li) break;
        if (item.how !== "confirmed") li.classList.add("is-superseded");
        const note = document.createElement("p");
        note.className = "turn-note hint";
        note.textContent = item.how === "confirmed" ? gettext("You confirmed these words.") : gettext("Misheard: your correction is below.");
        li.append(note);
        break;
      }
      case "recognition_check": // shown by renderCheck (which moves focus to it)
        if (S.live && $("recognition-check")) announce(gettext("Check what was heard: confirm it, type what you said, or say it again."));
        break;
      case "examiner_said":
        if (S.live) announce(`${cfg.examinerName}: ${item.text}`);
        break;
      case "bot_ready":
        if (S.live) announce(gettext("The examiner is ready. You can start the exam."));
        break;
      case "part":
        if (S.live) {
          const part = cfg.parts[item.partIndex];
          announce(tf(gettext("Part %(number)s of %(total)s: %(label)s."), { number: part.number, total: cfg.parts.length, label: part.label }));
        }
        break;
      case "state":
        if (S.live) announceState(item.from, item.to);
        break;
      case "time_warning":
        if (S.live) announceTimeWarning(item);
        break;
      case "command_ack":
        onCommandAck(item);
        break;
      case "system_error":
        if (item.code === "correction_refused") correctionRefused();
        else if (item.code === "stt_typing") typeInstead(item);
        else if (S.live) {
          $("request-feedback").textContent = item.userMessage;
          if (item.severity === "fatal") announce(item.userMessage, true);
        }
        break;
      default:
        break;
    }
  }

  function announceState(previous, to) {
    if (to === "paused") announce(gettext("The exam is paused. Both clocks have stopped."), true);
    else if (to === "in_progress" && previous === "paused") announce(gettext("The exam has resumed."));
    else if (to === "in_progress") announce(gettext("The exam has started."));
    else if (TERMINAL.has(to)) {
      announce(gettext("The exam has finished. Use the button to continue to the completion page."), true);
      window.setTimeout(() => $("banner-done").focus(), 100);
    }
  }

  function announceTimeWarning(warning) {
    const where = warning.scope === "node" ? gettext("in this part") : gettext("in the exam");
    const extra = warning.wrapUp ? gettext(" The examiner will now move to the final part.") : "";
    announce(tf(gettext("%(time)s left %(where)s."), { time: spoken(warning.remainingMs), where }) + extra);
  }

  function onCommandAck(ack) {
    const mine = S.pendingCommands.has(ack.commandId);
    const type = mine ? S.pendingCommands.get(ack.commandId) : CANONICAL_TO_ENVELOPE[ack.command];
    S.pendingCommands.delete(ack.commandId);
    if (!S.live || !type) return;
    const label = COMMAND_LABELS[type] || ack.command;
    const text = ack.accepted
      ? ACCEPTED_TEXT[type] || tf(gettext("Your request to %(label)s was received."), { label })
      : tf(gettext("Your request to %(label)s is not available right now."), { label });
    $("request-feedback").textContent = text; // a status region: read by itself
  }

  // --- the socket ---------------------------------------------------------------------------------------
  function socketUrl() {
    const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
    return `${scheme}//${window.location.host}${cfg.socketPath}?after_seq=${S.view.gate.lastSeq}`;
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
      else if (frame.kind === "ack") onAck(frame);
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
      if (wasConnected && !S.view.finished) announce(gettext("Connection lost. Reconnecting."), true);
      if (!TERMINAL.has(S.view.examState)) scheduleReconnect();
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
    resendUnacked(0);
    render();
    if (reconnected) announce(gettext("Connection restored."));
    if (S.view.finished) $("banner-done").focus();
  }

  function onSocketError(frame) {
    if (frame.code === "unavailable") return; // not stored: sent again by resendUnacked
    if (frame.code === "after_seq") {
      // The log is shorter than what this page has seen (it cannot be); start over cleanly.
      window.location.reload();
      return;
    }
    $("request-feedback").textContent = gettext("Something you sent was not understood. Please try again.");
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

  // --- the durable inbox: inputs are sent until the server says they are stored --------------------
  const UNACKED_KEY = `viva-unacked-${cfg.sessionId}`;

  function saveUnacked() {
    try {
      const frames = Array.from(S.unacked.values(), (entry) => entry.frame);
      if (frames.length) window.sessionStorage.setItem(UNACKED_KEY, JSON.stringify(frames));
      else window.sessionStorage.removeItem(UNACKED_KEY);
    } catch (error) {
      // storage unavailable: inputs are still kept in memory
    }
  }

  function frameId(frame) {
    return frame.kind === "command" ? frame.command.commandId : frame.id;
  }

  /** A typed answer: shown at once as "Sending…", stored by the server before it counts. */
  function sendTypedAnswer(text) {
    const li = addTurn("candidate", text, "is-pending");
    const note = document.createElement("p");
    note.className = "turn-note hint";
    note.textContent = gettext("Sending…");
    li.append(note);
    li.scrollIntoView({ block: "nearest" });
    const id = uuid7();
    S.pendingAnswers.push({ key: norm(text), li, id });
    sendInput({ kind: "answer", id, text });
  }

  // --- confirming a skip or a finish (issue #31) --------------------------------------------------------------
  // The examiner asked "Do you want to ...?": Yes / No answer it as the candidate's own words
  // would (the answer is stored and read by the runtime like any answer); saying it works too.
  function renderConfirm(asking) {
    const box = $("confirm-command");
    if (!box) return;
    const asked = S.view.confirming;
    box.hidden = !asked || S.view.examState !== "in_progress";
    if (!asked) return;
    const question = $("confirm-command-question");
    const key = { revise_earlier_answer: "revise", language_switch: "language" }[asked] || asked;
    question.textContent = question.dataset[key] || "";
    if (asking && S.live) $("confirm-yes").focus();
  }

  ["confirm-yes", "confirm-no"].forEach((id) => {
    const button = $(id);
    if (!button) return;
    button.addEventListener("click", () => {
      if (S.view.examState !== "in_progress") return;
      $("confirm-command").hidden = true;
      sendTypedAnswer(button.dataset.answer);
      announce(gettext("Answer sent."));
    });
  });

  function sendInput(frame) {
    S.unacked.set(frameId(frame), { frame, sentAt: Date.now() });
    saveUnacked();
    return transmit(frame);
  }

  function transmit(frame) {
    if (S.socket && S.connected && S.socket.readyState === WebSocket.OPEN) {
      S.socket.send(JSON.stringify(frame));
      return true;
    }
    return false;
  }

  function resendUnacked(olderThanMs) {
    const now = Date.now();
    S.unacked.forEach((entry) => {
      if (now - entry.sentAt < olderThanMs) return;
      if (transmit(entry.frame)) entry.sentAt = now;
    });
  }

  function onAck(frame) {
    if (!S.unacked.delete(frame.id)) return;
    saveUnacked();
    const pending = S.pendingAnswers.find((p) => p.id === frame.id);
    const note = pending && pending.li.querySelector(".turn-note");
    if (note) note.textContent = gettext("Sent");
    correctionAcked(frame.id);
  }

  try {
    JSON.parse(window.sessionStorage.getItem(UNACKED_KEY) || "[]").forEach((frame) => {
      if (frame && typeof frame === "object" && frameId(frame)) {
        S.unacked.set(frameId(frame), { frame, sentAt: 0 });
      }
    });
  } catch (error) {
    // nothing kept from an earlier page
  }
  window.setInterval(() => resendUnacked(4000), 2000);

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
    if (NODE_GATED.has(type)) {
      payload.nodeId = S.view.nodeId;
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
    const sent = sendInput({ kind: "command", command });
    const text = sent
      ? tf(gettext("Sent: %(label)s…"), { label: COMMAND_LABELS[type] })
      : tf(gettext("Not connected. Your request to %(label)s will be sent when the connection is back."), { label: COMMAND_LABELS[type] });
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
    sendInput({ kind: "candidate_ready", id: uuid7() });
    render();
    announce(gettext("Starting the exam."));
    window.setTimeout(() => {
      // No answer from the examiner: let the candidate try again.
      if (NOT_STARTED.has(S.view.examState)) {
        S.readySent = false;
        render();
      }
    }, 15000);
  });

  // --- composing signals and the draft (issue 15) ------------------------------------------------------
  // While the candidate types, the examiner waits: a throttled {"kind":"composing"} signal tells the
  // server (never queued while offline: a stale signal is worthless), idle after a pause in typing.
  // The draft lives in sessionStorage with the part it was written for, so a reload keeps it and a
  // move to the next part never carries it there silently.
  const COMPOSING_REFRESH_MS = 3000;
  const COMPOSING_IDLE_MS = 6000;
  const DRAFT_KEY = `viva-draft-${cfg.sessionId}`;
  let composingSentAt = 0;
  let composingActive = false;
  let composingIdle = null;

  function composing(active) {
    window.clearTimeout(composingIdle);
    if (active) composingIdle = window.setTimeout(() => composing(false), COMPOSING_IDLE_MS);
    const now = Date.now();
    if (active === composingActive && (!active || now - composingSentAt < COMPOSING_REFRESH_MS)) return;
    if (!(S.socket && S.connected && S.socket.readyState === WebSocket.OPEN)) return;
    composingActive = active;
    composingSentAt = now;
    S.socket.send(JSON.stringify({ kind: "composing", active }));
  }

  function saveDraft() {
    const box = $("answer");
    try {
      if (box && box.value) window.sessionStorage.setItem(DRAFT_KEY, JSON.stringify({ nodeId: S.draftNode, text: box.value }));
      else window.sessionStorage.removeItem(DRAFT_KEY);
    } catch (error) {
      /* storage full or disabled: the draft stays in the box */
    }
  }

  function restoreDraft() {
    const box = $("answer");
    try {
      const saved = JSON.parse(window.sessionStorage.getItem(DRAFT_KEY) || "null");
      if (saved && saved.text && !box.value) {
        box.value = saved.text;
        S.draftNode = saved.nodeId || null;
      }
    } catch (error) {
      /* a damaged draft is dropped */
    }
  }

  function noteDraftOfAnotherPart() {
    const box = $("answer");
    const note = $("draft-note");
    if (!box || !note) return;
    const other = box.value.trim() && S.draftNode && S.draftNode !== S.view.nodeId;
    note.hidden = !other;
    if (other && S.live) announce(note.textContent, true);
  }

  // Voice: the recogniser is down and none stands in, so the candidate types from now on (the
  // examiner is still heard). Replayed on a reload, so the box stays open.
  function typeInstead(item) {
    const answerForm = $("answer-form");
    if (!answerForm || !answerForm.hidden) return;
    answerForm.hidden = false;
    $("request-feedback").textContent = item.userMessage;
    if (S.live) {
      announce(item.userMessage, true);
      $("answer").focus();
    }
  }

  // --- typed answers -----------------------------------------------------------------------------------------
  const form = $("answer-form");
  if (form) {
    const box = $("answer");
    form.addEventListener("submit", (event) => {
      event.preventDefault();
      const text = box.value.trim();
      if (!text || S.view.examState !== "in_progress") return;
      sendTypedAnswer(text);
      box.value = "";
      S.draftNode = null;
      $("draft-note").hidden = true;
      saveDraft();
      composing(false);
      box.focus();
      announce(gettext("Answer sent."));
    });
    box.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
        event.preventDefault();
        form.requestSubmit();
      }
    });
    box.addEventListener("input", () => {
      if (!box.value.trim()) S.draftNode = null;
      else if (!S.draftNode) S.draftNode = S.view.nodeId;
      $("draft-note").hidden = true;
      saveDraft();
      composing(box.value.trim() !== "");
    });
    restoreDraft();
    // Leaving or reloading the page ends the typing (a refresh would otherwise keep it alive).
    window.addEventListener("pagehide", () => composing(false));
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
      status.textContent = gettext("Audio could not be loaded. Tell your proctor.");
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
          connecting: gettext("Connecting your audio…"),
          connected: gettext("Audio connected."),
          reconnecting: gettext("Audio connection lost. Reconnecting…"),
          failed: (detail ? tf(gettext("Audio could not connect (%(detail)s). Use \"Reconnect audio\", or tell your proctor."), { detail }) : gettext("Audio could not connect. Use \"Reconnect audio\", or tell your proctor.")),
        }[state];
        status.textContent = text || "";
        $("mic-state").textContent = state === "connected" ? gettext("Microphone: on") : tf(gettext("Microphone: %(state)s"), { state: MIC_STATES[state] || state });
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
      return S.view.gate.lastSeq;
    },
    get live() {
      return S.live;
    },
    get state() {
      return S.view.examState;
    },
    dropConnection() {
      if (S.socket) S.socket.close(); // as a network drop would: the page reconnects by itself
    },
  };

  render();
  connect();
  startVoice();
  // Late: ask the server why, every WAIT_POLL_MS until the examiner is ready (issue #33: every
  // examiner busy and the candidate's place in the queue, or none running), and say it.
  const WAIT_POLL_MS = 5000;
  async function askWhyWaiting() {
    if (S.view.botReady || !NOT_STARTED.has(S.view.examState) || S.view.examState === "ready") return;
    try {
      const response = await fetch(cfg.examinerWaitUrl, { credentials: "same-origin", headers: { Accept: "application/json" } });
      const data = response.ok ? await response.json() : null;
      const message = data && typeof data.message === "string" ? data.message : null;
      if (message !== S.botWait) {
        S.botWait = message;
        if (message) announce(message, true);
        render();
      }
    } catch (e) {
      // offline for a moment: the room's own words stay, and the next poll asks again
    }
    window.setTimeout(askWhyWaiting, WAIT_POLL_MS);
  }
  window.setTimeout(() => {
    if (S.view.botReady || !NOT_STARTED.has(S.view.examState) || S.view.examState === "ready") return;
    S.botLate = true;
    announce(gettext("The examiner is taking longer than usual to start."), true);
    render();
    if (cfg.examinerWaitUrl) askWhyWaiting();
  }, BOT_START_PATIENCE_MS);
})();
