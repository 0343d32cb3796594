// `serverless package` (osls, offline) of a scratch project, for the tests of what the plugin
// generates. One osls run costs about 3 s of CPU (most of it validating the configuration against
// the framework's schema), so each distinct run is kept in node_modules/.cache/klw-osls, named by
// everything its result depends on: the toolkit's sources and settings, the osls and esbuild
// versions (package-lock.json), the project's files, the arguments and the KLW_/AWS_/SLS_ environment. Any change
// there means a new osls run; a stored run gives back osls's exit code and output, the package
// folder it wrote and the bundles the plugin built in dist/.
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runServerless } from '../../../infra/deploy/serverless.ts';
import { hashTree, toolkitHash } from '../../helpers.ts';

const TOOLKIT = fileURLToPath(new URL('../../../', import.meta.url));
/** Where the runs are kept. */
const CACHE = join(TOOLKIT, 'node_modules', '.cache', 'klw-osls');
/** Folders of a project that osls, the plugin or the loader write (their caches), never read as input. */
const OUTPUTS = new Set(['dist', '.serverless', 'node_modules', join('.klw', 'load')]);

/** The name of a run: the toolkit, then the project, arguments and environment. */
function runName(work: string, args: string[], env: NodeJS.ProcessEnv): string {
  const hash = createHash('sha256').update(`${JSON.stringify(args)}\0`);
  for (const name of Object.keys(env).sort()) if (/^(KLW_|AWS_|SLS_)/.test(name)) hash.update(`${name}=${env[name]}\0`);
  hashTree(hash, work, work, OUTPUTS);
  return `${toolkit()}-${hash.digest('hex').slice(0, 16)}`;
}

/** The toolkit's sources and the versions of the tools it runs, osls's among them, and this file. */
function toolkit(): string {
  return toolkitHash([fileURLToPath(import.meta.url)]);
}

/** Copies `from` to `to` when it exists, replacing what `to` held. */
function copyIfThere(from: string, to: string): void {
  rmSync(to, { recursive: true, force: true });
  if (existsSync(from)) cpSync(from, to, { recursive: true });
}

/**
 * Runs `serverless package <args> --package <packageDir>` in `work` with `env`, or gives back the
 * stored run of the same inputs: osls's exit code and output, `packageDir` and `work/dist` as it
 * left them. Runs of other toolkit sources are removed when a new one is stored.
 */
export async function serverlessPackage(
  work: string,
  args: string[],
  packageDir: string,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const name = runName(work, args, env);
  const stored = join(CACHE, name);
  if (!existsSync(join(stored, 'result.json'))) {
    const result = await runServerless(work, ['package', ...args, '--package', packageDir], env);
    mkdirSync(CACHE, { recursive: true });
    const draft = mkdtempSync(join(CACHE, '.draft-'));
    copyIfThere(packageDir, join(draft, 'package'));
    copyIfThere(join(work, 'dist'), join(draft, 'dist'));
    writeFileSync(join(draft, 'result.json'), JSON.stringify(result));
    try {
      renameSync(draft, stored);
    } catch {
      // A test file running at once stored the same run first.
      rmSync(draft, { recursive: true, force: true });
    }
    for (const old of readdirSync(CACHE))
      if (!old.startsWith(`${toolkit()}-`) && !old.startsWith('.draft-'))
        rmSync(join(CACHE, old), { recursive: true, force: true });
    return result;
  }
  copyIfThere(join(stored, 'package'), packageDir);
  copyIfThere(join(stored, 'dist'), join(work, 'dist'));
  return JSON.parse(readFileSync(join(stored, 'result.json'), 'utf8'));
}

/** The path secret the scratch projects keep locally, as klw does: no template may hold its value. */
export const PATH_SECRET = 'fixture-secret-value-never-in-a-template-0123456789';

/**
 * A scratch project inside the repository (so `kube-lambda-webhooks` resolves to this package)
 * holding the fixture's functions and the local path secret, and the environment osls runs in
 * there: no AWS credentials, the secret in KLW_PATH_SECRET. Projects made alike share their runs.
 */
export function packagingProject(prefix: string, functions: string): { work: string; env: NodeJS.ProcessEnv } {
  const work = mkdtempSync(join(TOOLKIT, prefix));
  cpSync(functions, join(work, 'functions'), { recursive: true });
  mkdirSync(join(work, '.klw', 'local'), { recursive: true });
  writeFileSync(join(work, '.klw', 'local', 'path-secret'), `${PATH_SECRET}\n`);
  return {
    work,
    env: { ...process.env, AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '', KLW_PATH_SECRET: PATH_SECRET },
  };
}

/** Every param the plugin takes that adds resources or settings, as the tests of the template give them. */
export const EVERY_PARAM = [
  '--param',
  'functionUrls=true',
  '--param',
  'provisionedConcurrency=2',
  '--param',
  'reservedConcurrency=5',
  '--param',
  'alarmTopicArn=arn:aws:sns:us-east-1:123456789012:oncall',
  '--param',
  'bearerTokenParameter=/team/token',
];
