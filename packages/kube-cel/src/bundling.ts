/**
 * What a bundler needs of the package (the `./bundling` subpath), without loading the rest of it:
 * the names under which a bundle records the expressions it compiles, keeps the loads of its chunks
 * under way, and reads its precompiled forms (see precompiled.ts).
 */
export { PENDING_KEY, PRECOMPILED_ENV, RECORD_ENV, RECORDED_KEY } from './precompiled.ts';
