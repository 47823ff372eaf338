// Stands in for "json-schema-library" when codemirror-json-schema imports it (see build.mjs).
// codemirror-json-schema validates and describes with Draft04, but the package schema is
// draft 2020-12 (numeric exclusiveMinimum, const, $defs): Draft07 reads those correctly.
export * from "json-schema-library";
export { Draft07 as Draft04 } from "json-schema-library";
