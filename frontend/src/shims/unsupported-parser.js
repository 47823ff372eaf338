// Stands in for codemirror-json-schema's JSON5 and YAML parsers (see build.mjs): the studio edits
// JSON only, and leaving them out keeps the yaml and json5 libraries out of the bundle.
function unsupported() {
  throw new Error("Only JSON documents are supported in the studio editor.");
}
export const parseJSON5DocumentState = unsupported;
export const parseJSON5Document = unsupported;
export const parseYAMLDocumentState = unsupported;
export const parseYAMLDocument = unsupported;
