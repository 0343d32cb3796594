import { resolve } from 'node:path';
import type { Command } from 'commander';
import { KlwError } from '../errors.ts';
import type { CommandContext } from './context.ts';
import { type ApiCommandOptions, apiOptions, serveApi } from './local.ts';
import { kubeconfigOption, type KubeconfigOptions } from './options.ts';

/** The options of `klw start`. */
interface StartOptions extends ApiCommandOptions, KubeconfigOptions {
  apply?: boolean;
}

/** Adds `klw start`. */
export function register(cli: Command, context: CommandContext): void {
  const { root, say } = context;
  apiOptions(cli.command('start').description('build, start the local HTTPS emulator and write manifests (npm start)'))
    .option('--apply', 'register the manifests with the cluster (removed again when stopped)')
    .addOption(kubeconfigOption('kubeconfig for --apply'))
    .action(async (options: StartOptions) => {
      // The emulator loads when the command runs, not with the program.
      const { alive, appliedNote, applyRecorded, kubectlRunner, leftoverNotice, manualRemoval } = await import(
        '../local/index.ts'
      );
      const { readRecord, serveUntilStopped, unregister } = await import('../local/index.ts');
      const stateDir = resolve(root(), options.stateDir);
      const kubeconfig = options.kubeconfig && resolve(options.kubeconfig);
      const kubectl = kubectlRunner(kubeconfig);
      if (options.apply) {
        const stale = readRecord(stateDir);
        if (stale && stale.pid !== process.pid && alive(stale.pid))
          throw new KlwError(
            `another emulator (pid ${stale.pid}) has its manifests applied from ${stateDir}; stop it first, or use another --state-dir`,
          );
        if (stale) {
          say(`a previous emulator (pid ${stale.pid}) stopped without removing what it registered; removing it now:`);
          await unregister(kubectlRunner(stale.kubeconfig ?? kubeconfig), stateDir, say);
        }
      } else for (const line of leftoverNotice(stateDir, options.stateDir)) say(line);
      let applied = false;
      const apply = async (manifests: string) => {
        try {
          const record = await applyRecorded(kubectl, manifests, stateDir, kubeconfig);
          if (!applied) {
            applied = true;
            say('');
            say(
              'REGISTERED with the cluster (the API server now sends reviews here; with failurePolicy Fail, requests fail while this emulator is unreachable):',
            );
            for (const o of record.objects) say(`  ${o.kind} ${o.name} (${appliedNote(o)})`);
            say(
              'This is undone when it stops (Ctrl+C). If it is killed, run: klw local unregister' +
                (options.stateDir !== '.klw/local' ? ` --state-dir ${options.stateDir}` : ''),
            );
            say('or by hand:');
            for (const line of manualRemoval(record)) say(`  ${line}`);
            say('');
          } else say(`re-applied ${manifests}`);
        } catch (err) {
          if (!applied) throw err;
          say(`klw: re-applying failed: ${(err as Error).message}`);
        }
      };
      await serveUntilStopped(
        async () => {
          const api = await serveApi(context, options, options.apply ? apply : undefined).catch(
            async (err: unknown) => {
              if (options.apply && readRecord(stateDir)) await unregister(kubectl, stateDir, say).catch(() => {});
              throw err;
            },
          );
          if (!options.apply) {
            say(`register them with a cluster whose API server can reach ${api.url}:`);
            say(
              `  kubectl apply -f ${api.manifestsPath}${options.kubeconfig ? ` --kubeconfig ${options.kubeconfig}` : ''}`,
            );
            say('  (or klw start --apply: registered while it runs, undone when it stops)');
          }
          say('press Ctrl+C to stop');
          return api;
        },
        async (api) => {
          if (options.apply) {
            say('removing what --apply registered:');
            await unregister(kubectl, stateDir, say).catch((err: unknown) => say(`klw: ${(err as Error).message}`));
          }
          await api.close();
        },
      );
    });
}
