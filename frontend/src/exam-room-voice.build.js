// Builds the exam room's voice bundle (run by `npm run build` after build.mjs; `make frontend`):
//   ../static/vendor/exam-room-voice.js               one minified IIFE defining `VivaExamVoice`
//   ../static/vendor/exam-room-voice.LICENSES.txt     the bundled packages and their licence texts
// See src/livekit-bundle.js; the outputs are committed.
import { bundle } from "./livekit-bundle.js";

await bundle({
  name: "exam-room-voice",
  globalName: "VivaExamVoice",
  buildScript: "exam-room-voice.build.js",
  banner:
    "/* Viva exam room voice: SmallWebRTC client and livekit-client, bundled by frontend/src/exam-room-voice.build.js. Licences: exam-room-voice.LICENSES.txt */",
});
