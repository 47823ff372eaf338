// The proctor's listen-in (bundled to static/vendor/proctor-listen.js, global `VivaProctorListen`;
// static/js/proctor-listen.js drives it on the proctor's session page).
//
//   const listen = VivaProctorListen.create({ tokenUrl, csrfToken, audioContainer,
//                                             onState(state, detail), onSpeakers(speakers) });
//   listen.start();   // POST tokenUrl (a listen-only token, bot/webrtc_views.py) → Room.connect
//   listen.stop();
//
// Listen-only twice over: the token grants no publishing (bot/livekit.py `proctor_token`), and this
// code never asks for the microphone and never publishes. Automatic subscription is off: only the
// audio tracks of the candidate (identity "candidate-…") and of the examiner bot ("bot-…") are
// subscribed, nothing else (no video, no other proctor). Their audio plays through <audio> elements
// made by livekit-client inside `audioContainer`.
//
// States (onState): "connecting", "listening", "reconnecting", "stopped", "failed" (detail: why).
// onSpeakers({candidate, examiner}), each "absent" (not in the room), "present" or "speaking".
import { LogLevel, Room, RoomEvent, Track, setLogLevel } from "livekit-client";

setLogLevel(LogLevel.warn);

const ROLES = { candidate: "candidate", bot: "examiner" };

/** "candidate" or "examiner" for the identities bot/livekit.py mints, else null. */
export function roleOf(identity) {
  const prefix = String(identity || "").split("-", 1)[0];
  return Object.prototype.hasOwnProperty.call(ROLES, prefix) ? ROLES[prefix] : null;
}

async function fetchToken(url, csrfToken) {
  let response;
  try {
    response = await fetch(url, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/json", Accept: "application/json", "X-CSRFToken": csrfToken },
      body: "{}",
    });
  } catch (error) {
    throw new Error("The server could not be reached for a listening token.");
  }
  const data = await response.json().catch(() => ({}));
  if (!response.ok) throw new Error((data.error && data.error.message) || `The server refused (HTTP ${response.status}).`);
  return data;
}

function wanted(publication, participant) {
  return publication.kind === Track.Kind.Audio && roleOf(participant.identity) !== null;
}

export function create(options) {
  const onState = options.onState || (() => {});
  const onSpeakers = options.onSpeakers || (() => {});
  let room = null;
  let live = false;
  let attempt = 0;

  function speakers() {
    const found = { candidate: "absent", examiner: "absent" };
    if (!room) return found;
    for (const participant of room.remoteParticipants.values()) {
      const role = roleOf(participant.identity);
      if (role) found[role] = participant.isSpeaking ? "speaking" : "present";
    }
    return found;
  }

  const report = () => onSpeakers(speakers());

  function subscribeAll(participant) {
    for (const publication of participant.trackPublications.values()) {
      if (wanted(publication, participant)) publication.setSubscribed(true);
    }
  }

  function close() {
    live = false;
    const current = room;
    room = null;
    if (current) {
      current.removeAllListeners();
      current.disconnect();
    }
    options.audioContainer.replaceChildren();
    report();
  }

  return {
    get listening() {
      return live;
    },

    async start() {
      if (room) return;
      const mine = ++attempt;
      onState("connecting");
      try {
        const grant = await fetchToken(options.tokenUrl, options.csrfToken);
        if (mine !== attempt) return;
        const current = new Room({ adaptiveStream: false, dynacast: false });
        room = current;
        current
          .on(RoomEvent.ParticipantConnected, (participant) => {
            subscribeAll(participant);
            report();
          })
          .on(RoomEvent.ParticipantDisconnected, report)
          .on(RoomEvent.TrackPublished, (publication, participant) => {
            if (wanted(publication, participant)) publication.setSubscribed(true);
          })
          .on(RoomEvent.TrackSubscribed, (track, publication, participant) => {
            if (!wanted(publication, participant)) {
              publication.setSubscribed(false);
              return;
            }
            const element = track.attach();
            element.dataset.role = roleOf(participant.identity);
            options.audioContainer.append(element);
            report();
          })
          .on(RoomEvent.TrackUnsubscribed, (track) => {
            track.detach().forEach((element) => element.remove());
            report();
          })
          .on(RoomEvent.ActiveSpeakersChanged, report)
          .on(RoomEvent.Reconnecting, () => onState("reconnecting"))
          .on(RoomEvent.Reconnected, () => onState("listening"))
          .on(RoomEvent.Disconnected, () => {
            if (room !== current || !live) return;
            close();
            onState("stopped", "The audio room ended the connection.");
          });
        try {
          await current.connect(grant.url, grant.token, { autoSubscribe: false });
        } catch (error) {
          const why = error && error.message ? ` (${error.message})` : "";
          throw new Error(`Could not connect to the LiveKit server at ${grant.url}${why}.`);
        }
        if (mine !== attempt) {
          current.disconnect();
          return;
        }
        live = true;
        current.remoteParticipants.forEach(subscribeAll);
        await current.startAudio().catch(() => {});
        onState("listening");
        report();
      } catch (error) {
        if (mine !== attempt) return;
        close();
        onState("failed", error && error.message ? error.message : String(error));
      }
    },

    stop() {
      attempt += 1;
      close();
      onState("stopped");
    },
  };
}
