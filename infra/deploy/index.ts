// Deploying to AWS: serverless.yml and the Serverless Framework (serverless.ts), the plugin that
// adds the functions to the service (serverless-plugin.ts, its throttles and alarms in alarms.ts),
// what a deploy left behind (deploy.ts) and the smoke test of the deployed functions (smoke.ts).
// The rest of klw imports deploy from here.
export * from './deploy.ts';
export * from './serverless.ts';
export * from './smoke.ts';
export { deploymentOf, functionDefinition, PLUGIN_NAME, pluginParams, routePath } from './serverless-plugin.ts';
