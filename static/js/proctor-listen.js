/* "Listen in" on the proctor's session page (templates/sessions/proctor_session.html; docs/voice.md).
 *
 * Drives static/vendor/proctor-listen.js (window.VivaProctorListen, livekit-client, built from
 * frontend/src/proctor-listen.js): "Listen in" asks the listen-only token endpoint
 * (voice:livekit-token, data-token-url) and joins the session's LiveKit room; only the candidate's
 * and the examiner's audio is subscribed, nothing is ever published. "Stop listening" leaves the
 * room. The state ("Connecting…", "Listening…", an error) is a polite live region; who is speaking
 * is shown in a list (not announced: it changes several times a second). Focus moves to the
 * button that replaces the one pressed. The page is usable without this script (the rest of it
 * does not depend on listening).
 */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  const start = $("listen-start");
  if (!start) return;
  const stop = $("listen-stop");
  const state = $("listen-state");
  const SPEAKER = { speaking: "speaking", present: "in the room, silent", absent: "not in the room" };
  const STATES = {
    connecting: "Connecting to the audio room…",
    listening: "Listening. Nobody can hear you.",
    reconnecting: "The audio connection dropped. Reconnecting…",
    stopped: "Not listening.",
  };

  function csrfToken() {
    const field = document.querySelector("input[name=csrfmiddlewaretoken]");
    if (field) return field.value;
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }

  function speakers(found) {
    document.querySelectorAll("#listen-speakers li[data-role]").forEach((li) => {
      const value = found ? found[li.dataset.role] || "absent" : null;
      li.dataset.speaking = value === "speaking" ? "true" : "false";
      li.querySelector(".speaker-state").textContent = value ? SPEAKER[value] : "not listening";
    });
  }

  function show(listening) {
    const focused = document.activeElement === start || document.activeElement === stop;
    start.hidden = listening;
    stop.hidden = !listening;
    if (focused || document.activeElement === document.body) (listening ? stop : start).focus();
  }

  function onState(name, detail) {
    state.dataset.state = name;
    if (name === "failed") {
      state.textContent = `Could not listen in: ${detail || "unknown error"}`;
      show(false);
      speakers(null);
      return;
    }
    state.textContent = name === "stopped" && detail ? `${detail} ${STATES.stopped}` : STATES[name] || name;
    show(name !== "stopped");
    if (name === "stopped") speakers(null);
  }

  if (!window.VivaProctorListen) {
    state.dataset.state = "failed";
    state.textContent = "Could not listen in: the audio player did not load. Reload the page.";
    return;
  }
  const listen = window.VivaProctorListen.create({
    tokenUrl: start.dataset.tokenUrl,
    csrfToken: csrfToken(),
    audioContainer: $("listen-audio"),
    onState,
    onSpeakers: speakers,
  });
  start.hidden = false;
  start.addEventListener("click", () => listen.start());
  stop.addEventListener("click", () => listen.stop());
  window.addEventListener("pagehide", () => listen.stop());

  // Test hook (docs/voice.md).
  window.vivaProctorListen = {
    get state() {
      return state.dataset.state || "stopped";
    },
  };
})();
