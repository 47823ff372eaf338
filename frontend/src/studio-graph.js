// The studio's flow picture: Cytoscape.js with the dagre layered layout, bundled into
// ../static/vendor/studio-graph.js (global `VivaStudioGraph`) by src/studio-graph.build.js.
// static/js/studio-flow.js builds the elements and drives it. cytoscape-edgehandles draws a
// transition by dragging from one node to another (cy.edgehandles(), in draw mode).
import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";
import edgehandles from "cytoscape-edgehandles";

cytoscape.use(dagre);
cytoscape.use(edgehandles);

// Cytoscape's renderer adds a <style> element (".__________cytoscape_container { position:
// relative }") unless an element with its id already exists; the site's CSP (style-src 'self'
// plus a nonce) would refuse it. The rule lives in static/css/app.css instead, and this marker
// tells Cytoscape the stylesheet is there.
const STYLESHEET_ID = "__________cytoscape_stylesheet";
if (typeof document !== "undefined" && !document.getElementById(STYLESHEET_ID)) {
  const marker = document.createElement("template");
  marker.id = STYLESHEET_ID;
  document.head.appendChild(marker);
}

export { cytoscape };
