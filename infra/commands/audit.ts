import { type Command, CommanderError, Option } from 'commander';
import type { AdmissionWebhook } from '../../lib/admission/webhook.ts';
import type { AuditReport } from '../audit/index.ts';
import { describeThrown, KlwError } from '../errors.ts';
import type { loadWebhooks } from '../functions.ts';
import type { FleetAuditOptions, FleetAuditTarget } from '../fleet/audit.ts';
import type { CommandContext } from './context.ts';
import {
  AUDIT_INCOMPLETE,
  DEFAULT_PAGE_SIZE,
  FLEET_FILE,
  kubeconfigOption,
  type KubeconfigOptions,
} from './options.ts';

/** The options of `klw audit`. */
interface AuditOptions extends KubeconfigOptions, Omit<FleetAuditOptions, 'output'> {
  output: FleetAuditOptions['output'] | 'openreports';
  kubeVersion?: string;
  /** The fleet cluster the context is (set once found). */
  cluster?: string;
}

/** The fleet cluster a `--context` is, when the project has a fleet file that names it. */
async function fleetClusterOf(
  root: string,
  context: string | undefined,
  names: string[],
  loaded: Awaited<ReturnType<typeof loadWebhooks>>,
): Promise<FleetAuditTarget | undefined> {
  if (!context) return undefined;
  const { loadFunctions } = await import('../functions.ts');
  const { loadFleet } = await import('../fleet/file.ts');
  const { fleetAuditTargets } = await import('../fleet/audit.ts');
  // The fleet file names every function: check it against all of them, not only those audited.
  const registrations = names.length
    ? (await loadFunctions(root)).map((f) => f.registration)
    : loaded.map((w) => w.registration);
  const fleet = loadFleet(root, registrations);
  const target = fleet ? fleetAuditTargets([context], false, fleet)[0] : undefined;
  return target && fleet?.clusters.some((c) => c.name === target.cluster) ? target : undefined;
}

/** Adds `klw audit`. */
export function register(cli: Command, context: CommandContext): void {
  cli
    .command('audit')
    .description(
      'run the existing objects of a cluster through the admission functions locally, as an update of each object onto itself; exit 1 when any would be denied, 2 when the audit is incomplete',
    )
    .argument('[functions...]', 'only these functions')
    .addOption(
      kubeconfigOption('kubeconfig (default: KUBECONFIG, ~/.kube/config, else the in-cluster service account)'),
    )
    .option(
      '--context <name>',
      'kubeconfig context (default: the current context); repeat it to audit several clusters in one report',
      (v: string, all: string[]) => [...all, v],
      [] as string[],
    )
    .option('--all-clusters', `audit every cluster of ${FLEET_FILE}, each through its context`)
    .addOption(
      new Option(
        '-o, --output <format>',
        'report format; openreports: Report and ClusterReport objects (openreports.io/v1alpha1) for kubectl apply',
      )
        .choices(['table', 'json', 'yaml', 'openreports'])
        .default('table'),
    )
    .option('--page-size <n>', 'objects per list request', (v: string) => Number(v), DEFAULT_PAGE_SIZE)
    .option('--as <user>', 'user name the reviews carry (default: who the cluster says you are)')
    .option('--as-group <group...>', 'groups the reviews carry, with --as')
    .option('--allow-partial', 'exit by the denials found even when some resources could not be listed (else exit 2)')
    .option('--request-timeout <duration>', 'most time one API request may take, to the last byte (default 60s)')
    .option('--list-timeout <duration>', "most of the API server's time one resource's pages may take (default 15m)")
    .option('--max-pages <n>', 'most pages one resource may have (default 10000)')
    .option('--exec-timeout <duration>', 'most time an exec credential plugin may run, then killed (default 60s)')
    .option('--no-progress', 'no progress bar (there is none unless stderr is a terminal)')
    .option('--kube-version <X.Y>', 'evaluate matchConditions as this Kubernetes version does (default: the newest)')
    // Exit 1 means "would deny" only: a usage error is an audit that did not run.
    .exitOverride((err) => {
      throw err.exitCode === 0 ? err : new CommanderError(AUDIT_INCOMPLETE, err.code, err.message);
    })
    .action(async (names: string[], options: AuditOptions) => {
      if (options.context.length > 1 || options.allClusters) {
        if (options.output === 'openreports')
          throw new KlwError(
            '-o openreports writes the reports of one cluster, to apply to that cluster: give one --context at a time',
            { exitCode: AUDIT_INCOMPLETE },
          );
        const { fleetAuditAction } = await import('../fleet/audit.ts');
        const { writeOutput } = await import('../output.ts');
        return fleetAuditAction(context.root(), names, options as FleetAuditOptions, { say: context.say, writeOutput });
      }
      let report: AuditReport;
      try {
        report = await auditCluster(context, names, options);
      } catch (err) {
        // Whatever kept the audit from running (credentials, the API server, the functions) exits 2, never 1.
        throw new KlwError(describeThrown(err), {
          exitCode: AUDIT_INCOMPLETE,
          cause: err,
        });
      }
      await reportAudit(context.say, report, options);
    });
}

/** Runs the audit of the cluster `options` reach, with the functions `names` (all when empty). */
async function auditCluster(
  { root, say }: CommandContext,
  names: string[],
  options: AuditOptions,
): Promise<AuditReport> {
  if (!Number.isInteger(options.pageSize) || options.pageSize < 1)
    throw new KlwError('--page-size must be a whole number of at least 1');
  const { KubeClient, kubeLimitsFrom, loadConnection, ProgressBar, runAudit, whoAmI } = await import(
    '../audit/index.ts'
  );
  const { loadWebhooks } = await import('../functions.ts');
  const { withKubeVersion } = await import('../kube-versions.ts');
  const limits = kubeLimitsFrom(options);
  const loaded = await loadWebhooks(root(), names);
  const cluster = await fleetClusterOf(root(), options.context[0], names, loaded);
  const webhooks = withKubeVersion(
    loaded.filter((w): w is AdmissionWebhook => w.registration.type !== 'conversion'),
    options.kubeVersion ?? cluster?.kubeVersion,
  );
  if (!webhooks.length) throw new KlwError('no admission functions to audit');
  const connection = await loadConnection({
    ...(options.kubeconfig ? { kubeconfig: options.kubeconfig } : {}),
    ...(options.context.length ? { context: options.context[0]! } : {}),
    execTimeoutMs: limits.execMs,
  });
  const client = new KubeClient(connection, limits);
  const auditor = options.as
    ? { username: options.as, groups: [...(options.asGroup ?? []), 'system:authenticated'] }
    : ((await whoAmI(client)) ?? { username: 'klw-audit', groups: ['system:authenticated'] });
  say(
    `auditing ${webhooks.length} function${webhooks.length === 1 ? '' : 's'} against ${client.connection.server} as ${auditor.username}`,
  );
  const bar = new ProgressBar(options.progress ? process.stderr : { isTTY: false, write: () => true });
  // authorizer checks in matchConditions: the connection's own user by SelfSubjectAccessReview, an auditor given with --as by SubjectAccessReview.
  const accessReviews = options.as ? 'subject' : 'self';
  if (cluster) {
    options.cluster = cluster.cluster;
    say(`cluster ${cluster.cluster} of ${FLEET_FILE}: its enforcement and Kubernetes version apply`);
  }
  return await runAudit({
    client,
    webhooks,
    auditor,
    accessReviews,
    ...(cluster ? { enforcement: cluster.enforcement } : {}),
    keepAllowed: options.output === 'openreports',
    pageSize: options.pageSize,
    onProgress: (p) => bar.update(p),
  }).finally(() => bar.done());
}

/** Prints the report and its summary; throws (exit 1 or 2) when something would be denied or went unchecked. */
async function reportAudit(say: (line: string) => void, report: AuditReport, options: AuditOptions): Promise<void> {
  const { deniedLine, openReports, renderAudit, summaryLine } = await import('../audit/index.ts');
  const { renderDocuments, writeOutput } = await import('../output.ts');
  for (const problem of report.problems) say(`${options.allowPartial ? 'warning' : 'incomplete'}: ${problem}`);
  for (const note of report.notes ?? []) say(`note: ${note}`);
  writeOutput(
    options.output === 'openreports'
      ? renderDocuments(
          openReports(report, { now: new Date(), ...(options.cluster ? { cluster: options.cluster } : {}) }),
          'yaml',
        )
      : renderAudit(report, options.output),
  );
  say(summaryLine(report));
  const denied = deniedLine(report);
  const problems = report.problems.length;
  if (problems && !options.allowPartial) {
    if (denied) say(`klw: ${denied}`);
    throw new KlwError(
      `audit incomplete: ${problems} problem${problems === 1 ? '' : 's'} above left objects unchecked; --allow-partial accepts a partial audit`,
      { exitCode: AUDIT_INCOMPLETE },
    );
  }
  if (denied) throw new KlwError(denied);
}
