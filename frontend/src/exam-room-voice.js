// The exam room's voice link (bundled to static/vendor/exam-room-voice.js, global `VivaExamVoice`).
//
//   const voice = VivaExamVoice.create({ transport, offerUrl, tokenUrl, audioElement, csrfToken,
//                                        onState(state, detail), onLevel(level 0..1) });
//   voice.connect();      // again after a failure: a new connection replaces the old one
//   voice.connected;      // true while audio flows both ways
//   voice.disconnect();
//
// transport "smallwebrtc" (the embedded default): a plain RTCPeerConnection. The microphone is the
// first (audio) transceiver, as Pipecat's SmallWebRTC transport expects; the SDP offer goes to
// bot/webrtc_views.py (POST {sdp, type: "offer", pc_id?} -> {sdp, type, pc_id}) with the CSRF
// token, after ICE gathering (no trickle needed on a LAN or localhost); a data channel carries the
// "ping" keep-alives Pipecat's connection uses to notice a vanished client. The examiner's voice
// arrives as the answer's audio track and plays in `audioElement`.
//
// transport "livekit": livekit-client's Room with a token from bot/webrtc_views.py
// (POST -> {url, token, ...}); the microphone is published, the bot's audio track attached.
//
// States: connecting, connected, reconnecting, failed. Captions never come this way: they are
// events on the session's WebSocket (static/js/exam-room.js).
import { Room, RoomEvent, Track } from "livekit-client";

const ICE_GATHERING_TIMEOUT_MS = 3000;
const PING_INTERVAL_MS = 1000;
const RETRY_DELAYS_MS = [1000, 2000, 4000, 8000];

function waitForIceGathering(pc) {
  if (pc.iceGatheringState === "complete") return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      pc.removeEventListener("icegatheringstatechange", check);
      window.clearTimeout(timer);
      resolve();
    };
    const check = () => {
      if (pc.iceGatheringState === "complete") done();
    };
    const timer = window.setTimeout(done, ICE_GATHERING_TIMEOUT_MS);
    pc.addEventListener("icegatheringstatechange", check);
  });
}

function levelMeter(stream, onLevel) {
  const AudioContextClass = window.AudioContext || window.webkitAudioContext;
  if (!AudioContextClass || !onLevel) return () => {};
  const context = new AudioContextClass();
  const analyser = context.createAnalyser();
  analyser.fftSize = 1024;
  context.createMediaStreamSource(stream).connect(analyser);
  const samples = new Float32Array(analyser.fftSize);
  const timer = window.setInterval(() => {
    analyser.getFloatTimeDomainData(samples);
    let sum = 0;
    for (let i = 0; i < samples.length; i += 1) sum += samples[i] * samples[i];
    onLevel(Math.min(1, Math.sqrt(sum / samples.length) * 4));
  }, 100);
  return () => {
    window.clearInterval(timer);
    context.close();
  };
}

async function postJson(url, body, csrfToken) {
  const response = await fetch(url, {
    method: "POST",
    credentials: "same-origin",
    headers: { "Content-Type": "application/json", "X-CSRFToken": csrfToken },
    body: JSON.stringify(body || {}),
  });
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const message = (data.error && data.error.message) || `HTTP ${response.status}`;
    throw new Error(message);
  }
  return data;
}

class SmallWebRTCLink {
  constructor(options) {
    this.options = options;
    this.pc = null;
    this.channel = null;
    this.stream = null;
    this.stopMeter = () => {};
    this.pinger = 0;
    this.pcId = null;
  }

  async open() {
    const { offerUrl, csrfToken, audioElement } = this.options;
    if (!this.stream) {
      this.stream = await navigator.mediaDevices.getUserMedia({
        audio: { echoCancellation: true, noiseSuppression: true, autoGainControl: true },
        video: false,
      });
      this.stopMeter = levelMeter(this.stream, this.options.onLevel);
    }
    const pc = new RTCPeerConnection({ iceServers: this.options.iceServers || [] });
    this.pc = pc;
    pc.addTransceiver(this.stream.getAudioTracks()[0], { direction: "sendrecv", streams: [this.stream] });
    const channel = pc.createDataChannel("viva", { ordered: true });
    this.channel = channel;
    channel.addEventListener("open", () => {
      this.pinger = window.setInterval(() => {
        if (channel.readyState === "open") channel.send(`ping: ${Date.now()}`);
      }, PING_INTERVAL_MS);
    });
    channel.addEventListener("close", () => window.clearInterval(this.pinger));
    pc.addEventListener("track", (event) => {
      if (event.track.kind !== "audio") return;
      audioElement.srcObject = event.streams[0] || new MediaStream([event.track]);
      const playing = audioElement.play();
      if (playing && playing.catch) playing.catch(() => {});
    });
    pc.addEventListener("connectionstatechange", () => {
      if (this.pc !== pc) return;
      const state = pc.connectionState;
      if (state === "connected") this.options.onConnected();
      else if (state === "failed" || state === "disconnected" || state === "closed") this.options.onLost(state);
    });
    await pc.setLocalDescription(await pc.createOffer());
    await waitForIceGathering(pc);
    const answer = await postJson(offerUrl, { sdp: pc.localDescription.sdp, type: "offer" }, csrfToken);
    this.pcId = answer.pc_id;
    await pc.setRemoteDescription({ type: answer.type, sdp: answer.sdp });
  }

  close(keepMicrophone) {
    window.clearInterval(this.pinger);
    if (this.channel) this.channel.close();
    if (this.pc) this.pc.close();
    this.pc = null;
    this.channel = null;
    if (!keepMicrophone && this.stream) {
      this.stopMeter();
      this.stream.getTracks().forEach((track) => track.stop());
      this.stream = null;
    }
  }
}

class LiveKitLink {
  constructor(options) {
    this.options = options;
    this.room = null;
    this.stopMeter = () => {};
  }

  async open() {
    const { tokenUrl, csrfToken, audioElement } = this.options;
    const grant = await postJson(tokenUrl, {}, csrfToken);
    const room = new Room({ adaptiveStream: false, dynacast: false });
    this.room = room;
    room.on(RoomEvent.TrackSubscribed, (track) => {
      if (track.kind === Track.Kind.Audio) track.attach(audioElement);
    });
    room.on(RoomEvent.Reconnecting, () => this.options.onLost("reconnecting"));
    room.on(RoomEvent.Reconnected, () => this.options.onConnected());
    room.on(RoomEvent.Disconnected, () => {
      if (this.room === room) this.options.onLost("disconnected");
    });
    await room.connect(grant.url, grant.token);
    await room.localParticipant.setMicrophoneEnabled(true);
    const publication = room.localParticipant.getTrackPublication(Track.Source.Microphone);
    const track = publication && publication.track && publication.track.mediaStreamTrack;
    if (track) this.stopMeter = levelMeter(new MediaStream([track]), this.options.onLevel);
    this.options.onConnected();
  }

  close() {
    this.stopMeter();
    const room = this.room;
    this.room = null;
    if (room) room.disconnect();
  }
}

export function create(options) {
  const onState = options.onState || (() => {});
  let link = null;
  let attempt = 0;
  let retryTimer = 0;
  const voice = {
    connected: false,
    transport: options.transport === "livekit" ? "livekit" : "smallwebrtc",
    async connect() {
      window.clearTimeout(retryTimer);
      if (link) link.close(true);
      voice.connected = false;
      onState(attempt ? "reconnecting" : "connecting");
      const linkOptions = {
        ...options,
        onConnected: () => {
          attempt = 0;
          voice.connected = true;
          onState("connected");
        },
        onLost: (why) => {
          voice.connected = false;
          if (attempt >= RETRY_DELAYS_MS.length) {
            onState("failed", why);
            return;
          }
          onState("reconnecting", why);
          retryTimer = window.setTimeout(() => voice.connect(), RETRY_DELAYS_MS[attempt]);
          attempt += 1;
        },
      };
      const current = voice.transport === "livekit" ? new LiveKitLink(linkOptions) : new SmallWebRTCLink(linkOptions);
      if (link && link.stream && current instanceof SmallWebRTCLink) {
        current.stream = link.stream; // keep the microphone (no second permission prompt)
        current.stopMeter = link.stopMeter;
      }
      link = current;
      try {
        await link.open();
      } catch (error) {
        voice.connected = false;
        onState("failed", error && error.message ? error.message : String(error));
      }
    },
    disconnect() {
      window.clearTimeout(retryTimer);
      if (link) link.close(false);
      link = null;
      voice.connected = false;
    },
  };
  return voice;
}
