// The Serverless Framework plugin `kube-lambda-webhooks/serverless`. The framework may load
// plugins with require(), so this module has no top-level await: the plugin itself (compiled
// JavaScript in pkg/ when installed, the TypeScript source through tsx in a checkout of the
// repository) is imported in asyncInit, which the framework awaits before using any plugin.
import { existsSync } from 'node:fs';

const source = new URL('../deploy/serverless-plugin.ts', import.meta.url);
/** The lifecycle events the plugin hooks; the framework reads them before asyncInit. */
export const HOOKS = [
  'before:package:createDeploymentArtifacts',
  'before:deploy:function:packageFunction',
  'before:package:finalize',
];

async function load() {
  if (existsSync(source)) {
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
