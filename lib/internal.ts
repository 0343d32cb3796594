// The tools' (infra/) entry point into the library's internals: what `klw` needs beyond the
// public entry points. It is not in package.json's exports, so users cannot import it.
export * from './registration.ts';
