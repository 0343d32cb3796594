// The Serverless Framework plugin `kube-lambda-webhooks/serverless`. The framework may load
// plugins with require(), so this module has no top-level await: the plugin itself (compiled
// JavaScript in pkg/ when installed; in a checkout of the repository the toolkit's cached build,
// as klw runs it, else the TypeScript source through tsx) is imported in asyncInit, which the
// framework awaits before using any plugin.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const source = new URL('../deploy/serverless-plugin.ts', import.meta.url);
/** The lifecycle events the plugin hooks; the framework reads them before asyncInit. */
export const HOOKS = [
  'before:package:createDeploymentArtifacts',
  'before:deploy:function:packageFunction',
  'before:package:finalize',
];

/** The plugin from the toolkit's cached build (infra/build-cache.mjs), or undefined when it cannot be built. */
async function built() {
  try {
    const { cachedBuild } = await import('../build-cache.mjs');
    const { dir } = await cachedBuild();
    process.setSourceMapsEnabled(true);
    return (await import(pathToFileURL(join(dir, 'plugin.mjs')).href)).default;
  } catch {
    return undefined;
  }
}

async function load() {
  if (existsSync(source)) {
    const plugin = await built();
    if (plugin) return plugin;
    const { register } = await import('tsx/esm/api');
    register();
    return (await import(source.href)).default;
  }
  return (await import('../../pkg/infra/deploy/serverless-plugin.js')).default;
}

/** Adds the functions in functions/, their routes, concurrency, throttling and alarms to the service. */
export default class KubeLambdaWebhooks {
  constructor(serverless, options, utils) {
    this.args = [serverless, options, utils];
    this.hooks = Object.fromEntries(HOOKS.map((event) => [event, () => this.plugin.hooks[event]()]));
  }

  async asyncInit() {
    const Plugin = await load();
    this.plugin = new Plugin(...this.args);
    await this.plugin.asyncInit();
  }
}
