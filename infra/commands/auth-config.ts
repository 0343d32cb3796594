import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { KlwError } from '../errors.ts';
import type { CommandContext } from './context.ts';

/** The options of `klw auth-config`. */
interface AuthConfigOptions {
  url: string;
  token?: string;
  tokenFile?: string;
  outDir: string;
}

/** Adds `klw auth-config`. */
export function register(cli: Command, { say }: CommandContext): void {
  cli
    .command('auth-config')
    .description('write the API server AdmissionConfiguration and kubeconfig that send a bearer token to the webhooks')
    .requiredOption('--url <url>', 'a webhook URL (or the base URL); its host[:port] names the credentials')
    .option('--token <token>', 'the bearer token')
    .option('--token-file <file>', 'read the token from a file')
    .option('--out-dir <dir>', 'where to write admission-config.yaml and webhook-kubeconfig.yaml', '.klw/auth')
    .action(async (options: AuthConfigOptions) => {
      if (!options.token === !options.tokenFile) throw new KlwError('give exactly one of --token or --token-file');
      const { writeAuthConfig } = await import('../auth-config.ts');
      const token = options.token ?? readFileSync(options.tokenFile!, 'utf8');
      const files = writeAuthConfig(options.outDir, options.url, token);
      say(`wrote ${files.admissionConfig}`);
      say(`wrote ${files.kubeconfig}`);
      say(`start kube-apiserver with --admission-control-config-file=${files.admissionConfig}`);
      say('and give the functions the same token (KLW_BEARER_TOKEN, or the SSM parameter when deployed)');
    });
}
