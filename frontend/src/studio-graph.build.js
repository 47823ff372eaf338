// Builds the studio's flow-graph bundle (run by `npm run build`; `make frontend`):
//   ../static/vendor/studio-graph.js             one minified IIFE defining `VivaStudioGraph`
//   ../static/vendor/studio-graph.LICENSES.txt   the bundled packages and their licence texts
// cytoscape-dagre embeds dagre (MIT) in its own dist file. See src/livekit-bundle.js for the
// shared esbuild settings; the outputs are committed.
import { bundle } from "./livekit-bundle.js";

await bundle({
  name: "studio-graph",
  globalName: "VivaStudioGraph",
  buildScript: "studio-graph.build.js",
  banner:
    "/* Viva studio flow graph: cytoscape + cytoscape-dagre + cytoscape-edgehandles, bundled by frontend/src/studio-graph.build.js. Licences: studio-graph.LICENSES.txt */",
});
