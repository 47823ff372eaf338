// Builds the proctor's listen-in bundle (run by `npm run build`; `make frontend`):
//   ../static/vendor/proctor-listen.js               one minified IIFE defining `VivaProctorListen`
//   ../static/vendor/proctor-listen.LICENSES.txt     the bundled packages and their licence texts
// See src/livekit-bundle.js; the outputs are committed.
import { bundle } from "./livekit-bundle.js";

await bundle({
  name: "proctor-listen",
  globalName: "VivaProctorListen",
  buildScript: "proctor-listen.build.js",
  banner:
    "/* Viva proctor listen-in: livekit-client, subscribe-only, bundled by frontend/src/proctor-listen.build.js. Licences: proctor-listen.LICENSES.txt */",
});
