import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KlwError } from './functions.ts';
import { scaffold, type FunctionType } from './scaffold.ts';
import { packageInfo } from './version.ts';

const PROJECT_TEMPLATES = fileURLToPath(new URL('./templates/project/', import.meta.url));

/** The first function of a new project, by template. */
export const EXAMPLE_FUNCTIONS: Record<FunctionType, string> = {
  validating: 'require-owner',
  mutating: 'add-created-by',
  conversion: 'widget-conversion',
};

/**
 * Development tools a project needs, with the versions this package is developed with:
 * tsx runs the TypeScript tests, typescript checks them, the Serverless Framework deploys.
 */
const DEV_TOOLS = ['@types/node', 'tsx', 'typescript', 'osls', 'serverless'] as const;

/** Options of `initProject`. */
export interface InitOptions {
  template?: FunctionType;
  /** How the project depends on this package: a version range (default `^<this version>`), or `file:` a tarball. */
  packageSpec?: string;
}

/** An npm package name made from a folder name. */
export function projectName(dir: string): string {
  const name = basename(resolve(dir)).toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^[._-]+|[-]+$/g, '');
  return name || 'webhooks';
}

/** The package.json of a new project: ESM, this package, the klw scripts. */
export function projectPackageJson(name: string, packageSpec: string): Record<string, unknown> {
  const info = packageInfo();
  const devDependencies: Record<string, string> = {};
  for (const tool of DEV_TOOLS) {
    // @types/node is also a dependency of the package (its public types use Buffer and NodeJS).
    const version = info.devDependencies[tool] ?? info.dependencies[tool];
    if (version) devDependencies[tool] = version;
  }
  // osls is the maintained fork of serverless v3; only one of the two is needed.
  if (devDependencies.osls) delete devDependencies.serverless;
  const sorted = Object.fromEntries(Object.entries(devDependencies).sort(([a], [b]) => (a < b ? -1 : 1)));
  return {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: '>=20' },
    scripts: {
      start: 'klw start',
      test: 'klw test',
      build: 'klw build',
      lint: 'klw lint',
      deploy: 'klw deploy',
    },
    dependencies: { [info.name]: packageSpec },
    devDependencies: sorted,
  };
}

/**
 * Creates a project in `dir` (new or empty): package.json, strict tsconfig.json, a first
 * function with its test, the conformance test, serverless.yml, .gitignore and a README.
 * Returns the files written, relative to `dir`.
 */
export function initProject(dir: string, options: InitOptions = {}): string[] {
  const root = resolve(dir);
  if (existsSync(root) && readdirSync(root).length) throw new KlwError(`${dir} is not empty; klw init creates a project in a new or empty folder`);
  const template = options.template ?? 'validating';
  const name = projectName(root);
  const packageSpec = options.packageSpec ?? `^${packageInfo().version}`;
  const render = (file: string) => readFileSync(join(PROJECT_TEMPLATES, file), 'utf8').replaceAll('__PROJECT__', name);
  const files: Array<[string, string]> = [
    ['package.json', `${JSON.stringify(projectPackageJson(name, packageSpec), null, 2)}\n`],
    ['tsconfig.json', render('tsconfig.json.tmpl')],
    ['serverless.yml', render('serverless.yml.tmpl')],
    ['.gitignore', render('gitignore.tmpl')],
    ['README.md', render('README.md.tmpl')],
    [join('test', 'functions', 'conformance.test.ts'), render('conformance.test.ts.tmpl')],
  ];
  mkdirSync(root, { recursive: true });
  for (const [file, text] of files) {
    mkdirSync(join(root, file, '..'), { recursive: true });
    writeFileSync(join(root, file), text);
  }
  const written = [...files.map(([file]) => file), ...scaffold(root, template, EXAMPLE_FUNCTIONS[template])];
  return written.map((f) => relative(root, resolve(root, f)).split('\\').join('/'));
}
