import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What klw reads from this package's package.json. */
export interface PackageInfo {
  name: string;
  version: string;
  /** The folder holding the package.json. */
  dir: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  /** The Node.js versions it runs on (`engines.node`). */
  nodeEngine?: string;
}

/** This package's name and version, read from its package.json (above infra/ in sources, above pkg/infra/ when installed). */
export function packageInfo(from: string = import.meta.url): PackageInfo {
  let dir = dirname(fileURLToPath(from));
  for (;;) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const pkg = JSON.parse(readFileSync(file, 'utf8')) as {
        name?: string;
        version?: string;
        dependencies?: Record<string, string>;
        devDependencies?: Record<string, string>;
        engines?: { node?: string };
      };
      if (pkg.name === 'kube-lambda-webhooks' && pkg.version)
        return {
          name: pkg.name,
          version: pkg.version,
          dir,
          dependencies: pkg.dependencies ?? {},
          devDependencies: pkg.devDependencies ?? {},
          ...(pkg.engines?.node ? { nodeEngine: pkg.engines.node } : {}),
        };
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`kube-lambda-webhooks: package.json not found above ${fileURLToPath(from)}`);
    dir = parent;
  }
}
