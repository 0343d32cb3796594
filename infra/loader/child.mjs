// The loader of function modules: a child process of klw that imports the modules it is sent
// (see infra/functions.ts), so a module that exits, loops or throws at load ends or stalls this
// process, never klw. In a checkout of the repository it runs the loader klw built from the
// TypeScript sources (bundle.ts; its folder is the argument), or failing that the sources through
// tsx, as infra/bin/klw.mjs does; installed from the package, the compiled JavaScript beside it.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Kept before any module can replace process.exit.
const exit = process.exit.bind(process);
const source = new URL('./child.ts', import.meta.url);
const [bundle] = process.argv.slice(2);
let child;
if (bundle) {
  child = await import(pathToFileURL(join(bundle, 'child.mjs')).href);
} else if (existsSync(fileURLToPath(source))) {
  const { register } = await import('tsx/esm/api');
  register();
  child = await import(source.href);
} else {
  child = await import('./child.js');
}
child.serve(exit);
