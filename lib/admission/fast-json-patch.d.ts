// fast-json-patch's ES module build, imported by path so that bundles keep only the functions
// used (its CommonJS main is one object holding all of them); its types are the package's own.
declare module 'fast-json-patch/module/core.mjs' {
  export { applyPatch, JsonPatchError } from 'fast-json-patch';
}
