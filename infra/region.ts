import { stringAt } from './json.ts';
// The AWS region of the commands that call AWS: --region, else serverless.yml's, else the
// environment's, as the Serverless Framework would pick it.
/** The region when neither serverless.yml nor the environment names one (the Serverless Framework's own default). */
export const FALLBACK_REGION = 'us-east-1';

/** Help text of every `--region` option: regionFor decides the region when it is not given. */
export const REGION_HELP = `AWS region (default: serverless.yml provider.region, else AWS_REGION or AWS_DEFAULT_REGION, else ${FALLBACK_REGION})`;

/**
 * Resolves the variables of a serverless.yml value the way `serverless` would without `--region`:
 * a literal, `${opt:…}` (absent, so its fallback), `${env:NAME}`, each with a `, fallback`;
 * undefined for anything else (another source, or nothing left).
 */
function resolveSimpleVariable(value: string, env: NodeJS.ProcessEnv): string | undefined {
  const text = value.trim();
  const quoted = /^(['"])(.*)\1$/.exec(text);
  if (quoted) return quoted[2] || undefined;
  if (!text.includes('${')) return text || undefined;
  const variable = /^\$\{\s*(opt|env):([A-Za-z0-9_.-]+)\s*(?:,\s*(.*))?\}$/s.exec(text);
  if (!variable) return undefined;
  const [, source, key, fallback] = variable;
  const found = source === 'env' ? env[key!] : undefined;
  return found || (fallback !== undefined ? resolveSimpleVariable(fallback, env) : undefined);
}

/**
 * The region the AWS commands use when `--region` is not given (see regionFor): serverless.yml's
 * provider.region (resolved as `serverless` would without --region), else AWS_REGION, else
 * AWS_DEFAULT_REGION, else us-east-1. Deploying, rotating, reading and invoking then agree on it.
 */
export function defaultRegion(config: unknown, env: NodeJS.ProcessEnv = process.env): string {
  const configured = stringAt(config, 'provider', 'region');
  const fromConfig = configured !== undefined ? resolveSimpleVariable(configured, env) : undefined;
  return fromConfig || env.AWS_REGION || env.AWS_DEFAULT_REGION || FALLBACK_REGION;
}

/**
 * The region of every klw command that calls AWS (deploy, secret, manifests --path-secret ssm,
 * smoke, logs): `--region` when given, else defaultRegion of serverless.yml (`config`, read
 * only then; undefined when there is none to read).
 */
export function regionFor(
  options: { region?: string },
  config: () => unknown,
  env: NodeJS.ProcessEnv = process.env,
): string {
  return options.region ?? defaultRegion(config(), env);
}
