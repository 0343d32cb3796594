// The loader of function modules: a child process of klw that imports the modules it is sent
// (see infra/functions.ts), so a module that exits, loops or throws at load ends or stalls this
// process, never klw. In a checkout of the repository it runs the TypeScript sources through tsx,
// as infra/bin/klw.mjs does; installed from the package, the compiled JavaScript beside it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// Kept before any module can replace process.exit.
const exit = process.exit.bind(process);
const source = new URL('./child.ts', import.meta.url);
let child;
if (existsSync(fileURLToPath(source))) {
  const { register } = await import('tsx/esm/api');
  register();
  child = await import(source.href);
} else {
  child = await import('./child.js');
}
child.serve(exit);
