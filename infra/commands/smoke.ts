import type { Command } from 'commander';
import { KlwError } from '../errors.ts';
import type { CommandContext } from './context.ts';
import {
  regionOption,
  stageOption,
  stateDirOption,
  type RegionOptions,
  type StageOptions,
  type StateDirOptions,
} from './options.ts';

/** The options of `klw smoke`. */
interface SmokeOptions extends StageOptions, RegionOptions, StateDirOptions {
  endpoint?: string;
}

/** Adds `klw smoke`. */
export function register(cli: Command, { root, say }: CommandContext): void {
  cli
    .command('smoke')
    .description('invoke every function through the Lambda Invoke API with a sample review and check the answer')
    .addOption(stageOption())
    .addOption(regionOption())
    .option('--endpoint <url>', 'a Lambda endpoint, such as klw local start-lambda (http://127.0.0.1:3001)')
    .addOption(stateDirOption('local state directory holding the path secret, with --endpoint'))
    .action(async (options: SmokeOptions) => {
      const { LambdaClient } = await import('@aws-sdk/client-lambda');
      const { lambdaName, readServerless, smoke } = await import('../deploy/index.ts');
      const { loadFunctions } = await import('../functions.ts');
      const { regionFor } = await import('../region.ts');
      const { smokePathSecret } = await import('../secret-actions.ts');
      const registrations = (await loadFunctions(root())).map((f) => f.registration);
      // The local emulator (--endpoint) needs no serverless.yml, and takes any region.
      const config = options.endpoint ? undefined : readServerless(root());
      const region = regionFor(options, () => config);
      const client = options.endpoint
        ? new LambdaClient({
            endpoint: options.endpoint,
            region,
            credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
          })
        : new LambdaClient({ region });
      const service = config ? String(config.service) : '';
      const name = (fn: string) => (options.endpoint ? fn : lambdaName(service, options.stage, fn));
      const secret = await smokePathSecret({ ...options, region }, service);
      const results = await smoke(
        client,
        registrations,
        name,
        (r) => say(`  ${r.ok ? 'ok  ' : 'FAIL'} ${r.name.padEnd(28)} ${r.detail} (${Math.round(r.durationMs)} ms)`),
        secret,
      );
      const failures = results.filter((r) => !r.ok).length;
      say(`smoke: ${results.length - failures} passed, ${failures} failed`);
      if (failures) throw new KlwError(`${failures} function${failures > 1 ? 's' : ''} failed the smoke test`);
    });
}
