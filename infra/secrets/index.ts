// The path secret in the functions' URLs: its names, local file and SSM parameter (secrets.ts),
// and what the commands do with it (actions.ts). The rest of klw imports the secrets from here.
export * from './secrets.ts';
export * from './actions.ts';
