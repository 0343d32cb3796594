import type { Command } from 'commander';
import type { CommandContext } from './context.ts';
import { regionOption, stageOption, type RegionOptions, type StageOptions } from './options.ts';

/** The options of `klw logs`. */
interface LogsCommandOptions extends StageOptions, RegionOptions {
  since: string;
  follow?: boolean;
  cluster?: string;
}

/** Adds `klw logs <function> [--stage] [--region] [--since] [--follow]` (serverless.yml names the service and the default region). */
export function register(cli: Command, { root }: CommandContext): void {
  cli
    .command('logs')
    .description(
      'print one line per review of a deployed function (and its refused requests and failures) from CloudWatch Logs',
    )
    .argument('<function>', 'function name')
    .addOption(stageOption())
    .addOption(regionOption())
    .option('--since <when>', 'from how far back: 30s, 10m, 2h, 1d or an ISO 8601 time', '10m')
    .option('--follow', 'keep printing new lines until Ctrl+C')
    .option('--cluster <name>', "only the lines of this fleet cluster's calls")
    .action(async (name: string, options: LogsCommandOptions) => {
      const { CloudWatchLogsClient } = await import('@aws-sdk/client-cloudwatch-logs');
      const { readServerless } = await import('../deploy/serverless.ts');
      const { checkLogsCluster } = await import('../fleet/logs.ts');
      const { parseSince, printLogs } = await import('../logs.ts');
      const { regionFor } = await import('../region.ts');
      const config = () => readServerless(root());
      const startTime = parseSince(options.since);
      if (options.cluster) await checkLogsCluster(root(), options.cluster);
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      try {
        await printLogs(
          new CloudWatchLogsClient({ region: regionFor(options, config) }),
          {
            service: String(config().service),
            stage: options.stage,
            function: name,
            ...(options.cluster ? { cluster: options.cluster } : {}),
            startTime,
            follow: options.follow === true,
            signal: controller.signal,
          },
          (line) => process.stdout.write(`${line}\n`),
        );
      } finally {
        process.off('SIGINT', stop);
      }
    });
}
