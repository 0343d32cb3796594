import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeDir, writeFileSafely } from './files.ts';
import { KlwError } from './errors.ts';
import { scaffold, type FunctionType } from './scaffold.ts';
import { packageInfo, type PackageInfo } from './version.ts';

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
  /**
   * How the project depends on this package: a version range (default `^<this version>`), or a
   * tarball or folder as `file:<path>` or a bare path, read from `cwd` and written relative to the project.
   */
  packageSpec?: string;
  /** The folder a path in `packageSpec` is relative to; default the process's current folder. */
  cwd?: string;
}

// What npm reads as a path rather than a version, tag or URL: ./x, ../x, /x, ~/x, C:\x, or a tarball name.
const LOCAL_PATH = /^(?:\.{1,2}(?:[\\/]|$)|[\\/]|~[\\/]|[a-zA-Z]:[\\/])|\.(?:tgz|tar\.gz|tar)$/;

/**
 * The dependency spec to write into the project in `root`: a `file:` spec or a bare path is read
 * from `cwd`, must exist, and becomes `file:<path relative to root>`; anything else is kept as it is.
 */
export function projectPackageSpec(spec: string, root: string, cwd: string = process.cwd()): string {
  let path: string;
  if (spec.startsWith('file://')) path = fileURLToPath(spec);
  else if (spec.startsWith('file:')) path = spec.slice('file:'.length);
  // Other protocols (npm:, https:, git+ssh:, github:) are npm's to read; a drive letter is one character.
  else if (/^[a-zA-Z][a-zA-Z0-9+.-]+:/.test(spec)) return spec;
  else if (LOCAL_PATH.test(spec)) path = spec;
  else return spec;
  if (path === '~' || path.startsWith('~/') || path.startsWith('~\\')) path = join(homedir(), path.slice(1));
  const absolute = resolve(cwd, path);
  if (!existsSync(absolute)) {
    throw new KlwError(
      `--package ${spec}: ${absolute} does not exist (a path is read from the current folder, ${cwd}; make the tarball with npm pack)`,
    );
  }
  return `file:${relative(resolve(root), absolute).split(sep).join('/')}`;
}

/** Where the running klw was installed from: this package's sources, a tarball (its path), or elsewhere (the registry). */
export type InstallOrigin = { kind: 'checkout' } | { kind: 'tarball'; tarball: string } | { kind: 'registry' };

/**
 * Where the running klw comes from, read from the files around it (no registry is asked): the
 * sources have infra/cli.ts; an install (npx's cache included) has npm's lock file beside or
 * above its node_modules, whose `resolved` is `file:<tarball>` for a tarball install.
 */
export function installOrigin(info: PackageInfo = packageInfo()): InstallOrigin {
  if (existsSync(join(info.dir, 'infra', 'cli.ts'))) return { kind: 'checkout' };
  const modules = dirname(info.dir);
  if (basename(modules) !== 'node_modules') return { kind: 'registry' };
  const prefix = dirname(modules);
  for (const lock of [join(modules, '.package-lock.json'), join(prefix, 'package-lock.json')]) {
    if (!existsSync(lock)) continue;
    try {
      const packages =
        (JSON.parse(readFileSync(lock, 'utf8')) as { packages?: Record<string, { resolved?: string }> }).packages ?? {};
      const resolved = packages[`node_modules/${info.name}`]?.resolved;
      if (resolved?.startsWith('file:'))
        return { kind: 'tarball', tarball: resolve(prefix, resolved.slice('file:'.length)) };
      if (resolved) return { kind: 'registry' };
    } catch {
      // An unreadable lock file tells nothing; the next one may.
    }
  }
  return { kind: 'registry' };
}

/**
 * A note for `klw init` without --package when the `^<version>` it writes may not be on the
 * registry: klw runs from a tarball or from the sources. Undefined for a registry install.
 */
export function packageHint(
  origin: InstallOrigin = installOrigin(),
  version: string = packageInfo().version,
): string | undefined {
  const range = `kube-lambda-webhooks@^${version}`;
  if (origin.kind === 'tarball') {
    return `note: this klw was installed from ${origin.tarball}; the project depends on ${range}, which npm install finds only once that version is published. If it is not, run klw init again with --package ${origin.tarball}`;
  }
  if (origin.kind === 'checkout') {
    return `note: this klw runs from the kube-lambda-webhooks sources; the project depends on ${range}, which npm install finds only once that version is published. If it is not, run npm pack in the sources and klw init again with --package <path of the .tgz>`;
  }
  return undefined;
}

/** An npm package name made from a folder name. */
export function projectName(dir: string): string {
  const name = basename(resolve(dir))
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|[-]+$/g, '');
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
    // The Node.js this package and its dependencies run on, the project's too.
    engines: { node: info.nodeEngine ?? '*' },
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
 * function with its test, the conformance and lint tests, serverless.yml, .gitignore and a README.
 * Returns the files written, relative to `dir`.
 */
export function initProject(dir: string, options: InitOptions = {}): string[] {
  const root = resolve(dir);
  if (existsSync(root) && readdirSync(root).length)
    throw new KlwError(`${dir} is not empty; klw init creates a project in a new or empty folder`);
  const template = options.template ?? 'validating';
  const name = projectName(root);
  const packageSpec =
    options.packageSpec === undefined
      ? `^${packageInfo().version}`
      : projectPackageSpec(options.packageSpec, root, options.cwd);
  const render = (file: string) => readFileSync(join(PROJECT_TEMPLATES, file), 'utf8').replaceAll('__PROJECT__', name);
  const files: Array<[string, string]> = [
    ['package.json', `${JSON.stringify(projectPackageJson(name, packageSpec), null, 2)}\n`],
    ['tsconfig.json', render('tsconfig.json.tmpl')],
    ['serverless.yml', render('serverless.yml.tmpl')],
    ['.gitignore', render('gitignore.tmpl')],
    ['README.md', render('README.md.tmpl')],
    [join('test', 'functions', 'conformance.test.ts'), render('conformance.test.ts.tmpl')],
    [join('test', 'functions', 'lint.test.ts'), render('lint.test.ts.tmpl')],
  ];
  makeDir(root);
  for (const [file, text] of files) writeFileSafely(join(root, file), text, { exclusive: true, parents: true });
  const written = [...files.map(([file]) => file), ...scaffold(root, template, EXAMPLE_FUNCTIONS[template])];
  return written.map((f) => relative(root, resolve(root, f)).split('\\').join('/'));
}
