/* The microphone and speaker check of the answer-mode page (templates/sessions/exam_setup.html).
 *
 * "Test my microphone" asks for the microphone and drives the level meter from a Web Audio
 * analyser (nothing is recorded or sent); "Play a test sound" plays a short soft tone. Once the
 * level has moved and the tone has played, the confirmation box is ticked for the candidate
 * (they can still untick it). The tracks are stopped before the page is left.
 */
(function () {
  "use strict";

  const $ = (id) => document.getElementById(id);
  // Translations: Django's JavaScript catalogue in the exam's language (base.html loads it).
  const { gettext } = window.vivaI18n;  // static/js/i18n.js
  const micButton = $("mic-test");
  const speakerButton = $("speaker-test");
  if (!micButton || !speakerButton) return;
  const meter = $("mic-level");
  const micStatus = $("mic-status");
  const speakerStatus = $("speaker-status");
  const confirmBox = $("audio-checked");
  const voiceRadio = $("mode-voice");
  let context = null;
  let stream = null;
  let heard = false;
  let played = false;
  let frame = 0;

  function audioContext() {
    if (!context) context = new (window.AudioContext || window.webkitAudioContext)();
    if (context.state === "suspended") context.resume();
    return context;
  }

  function maybeConfirm() {
    if (heard && played && !confirmBox.checked) {
      confirmBox.checked = true;
      micStatus.textContent = gettext("Your microphone works.");
    }
  }

  micButton.addEventListener("click", async () => {
    if (voiceRadio && !voiceRadio.checked) voiceRadio.checked = true;
    if (stream) return;
    micStatus.textContent = gettext("Asking for your microphone…");
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: false });
    } catch (error) {
      micStatus.textContent =
        gettext("The microphone could not be used. Allow it in your browser, check it is plugged in, or choose text mode.");
      return;
    }
    const ctx = audioContext();
    const source = ctx.createMediaStreamSource(stream);
    const analyser = ctx.createAnalyser();
    analyser.fftSize = 1024;
    source.connect(analyser);
    const samples = new Float32Array(analyser.fftSize);
    micStatus.textContent = gettext("Listening. Say a few words.");
    let loudFrames = 0;
    const tick = () => {
      analyser.getFloatTimeDomainData(samples);
      let sum = 0;
      for (let i = 0; i < samples.length; i += 1) sum += samples[i] * samples[i];
      const rms = Math.sqrt(sum / samples.length);
      const level = Math.min(100, Math.round(rms * 400));
      meter.value = level;
      meter.textContent = `${level}%`;
      if (level >= 5) loudFrames += 1;
      if (loudFrames >= 5 && !heard) {
        heard = true;
        micStatus.textContent = gettext("We can hear you. Now play the test sound.");
        maybeConfirm();
      }
      frame = window.requestAnimationFrame(tick);
    };
    tick();
  });

  speakerButton.addEventListener("click", () => {
    const ctx = audioContext();
    const oscillator = ctx.createOscillator();
    const gain = ctx.createGain();
    oscillator.frequency.value = 440;
    gain.gain.setValueAtTime(0.0001, ctx.currentTime);
    gain.gain.exponentialRampToValueAtTime(0.2, ctx.currentTime + 0.05);
    gain.gain.exponentialRampToValueAtTime(0.0001, ctx.currentTime + 0.8);
    oscillator.connect(gain).connect(ctx.destination);
    oscillator.start();
    oscillator.stop(ctx.currentTime + 0.85);
    played = true;
    speakerStatus.textContent = gettext("Test sound played. If you did not hear it, check your volume and play it again.");
    maybeConfirm();
  });

  window.addEventListener("pagehide", () => {
    if (frame) window.cancelAnimationFrame(frame);
    if (stream) stream.getTracks().forEach((track) => track.stop());
  });
})();
