// What serverless.yml's check (serverless.ts) shares with the plugin: the plugin's name and each
// function's route. Apart from the plugin, so that `klw lint` checks serverless.yml without
// loading what the plugin deploys with (the builder, the zip writer, the compiler).
import type { Registration } from '../../lib/internal.ts';
import { usesPathSecret } from '../secrets/index.ts';

/** The name users list under `plugins:` in serverless.yml. */
export const PLUGIN_NAME = 'kube-lambda-webhooks/serverless';

/** The HTTP API route of a function: `/<name>/{secret}` when its URL carries the path secret, else `/<name>`. */
export function routePath(registration: Registration): string {
  return usesPathSecret(registration) ? `${registration.path}/{secret}` : registration.path;
}
