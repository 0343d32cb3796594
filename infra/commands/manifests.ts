import { resolve } from 'node:path';
import { type Command, Option } from 'commander';
import { KlwError } from '../errors.ts';
import type { FleetManifestOptions } from '../fleet/commands.ts';
import type { FleetCluster } from '../fleet/file.ts';
import type { Finding } from '../lint/finding.ts';
import type { Endpoints } from '../manifests.ts';
import { REGION_HELP } from '../region.ts';
import type { PathSecretOptions } from '../secret-actions.ts';
import type { CommandContext } from './context.ts';
import {
  DEFAULT_CONFIGURATION_NAME,
  FLEET_FILE,
  featureGatesOption,
  kubeVersionOption,
  regionOption,
  stageOption,
  stateDirOption,
  type KubeTargetOptions,
  type RegionOptions,
  type StageOptions,
  type StateDirOptions,
} from './options.ts';
import type { EndpointOptions } from './shared.ts';

/** The options of `klw manifests`. */
interface ManifestsOptions
  extends EndpointOptions,
    KubeTargetOptions,
    StateDirOptions,
    StageOptions,
    RegionOptions,
    FleetManifestOptions {
  out?: string;
  crdPatches?: string;
  name: string;
  format: 'yaml' | 'json';
  pathSecret: PathSecretOptions['pathSecret'];
}

/** Adds `klw manifests`. */
export function register(cli: Command, context: CommandContext): void {
  cli
    .command('manifests')
    .description('write the webhook configurations and CRD conversion for the functions at their https URLs')
    .option('--base-url <url>', 'https://host[:port][/stage]; each function at <base>/<name>')
    .option('--function-urls <file>', 'JSON object of function name to URL (Lambda function URLs)')
    .option('--ca-bundle <file>', 'PEM of the CA that signed the endpoint certificate')
    .option('--out <file>', 'write here instead of stdout')
    .option('--crd-patches <dir>', 'also write <crd>.conversion-patch.yaml files for kubectl patch --type merge')
    .option('--name <name>', 'name of the webhook configurations', DEFAULT_CONFIGURATION_NAME)
    .addOption(
      new Option(
        '--path-secret <source>',
        'path secret in clientConfig.url: a placeholder to replace, the local one (--state-dir), the deployed one from SSM (--stage, --region), or none',
      )
        .choices(['placeholder', 'local', 'ssm', 'none'])
        .default('placeholder'),
    )
    .addOption(stateDirOption('local state directory, for --path-secret local'))
    .addOption(stageOption('Serverless stage, for --path-secret ssm'))
    .addOption(regionOption(`${REGION_HELP}; for --path-secret ssm`))
    .addOption(new Option('--format <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .addOption(
      kubeVersionOption(
        'write only the fields this Kubernetes version knows (matchConditions need 1.28, or 1.27 with the feature gate)',
      ),
    )
    .addOption(
      featureGatesOption(
        'feature gates on in the target API server, as kube-apiserver takes them (AdmissionWebhookMatchConditions=true)',
      ),
    )
    .option('--cluster <name>', `a cluster of ${FLEET_FILE}: its secret, Kubernetes version and enforcement`)
    .option('--all-clusters', `every cluster of ${FLEET_FILE}, one file each in --out-dir`)
    .option('--out-dir <dir>', 'with --all-clusters: where <cluster>.yaml (or .json) go')
    .action((options: ManifestsOptions) => writeManifests(context, options));
}

/**
 * What writeManifests runs, imported when it runs: the program lists the command's options
 * without loading the generator, the linter and the AWS SDK.
 */
async function actionModules() {
  const [deploy, fleet, functions, versions, lint, rules, policies, output, region, secrets, secretActions, shared] =
    await Promise.all([
      import('../deploy/serverless.ts'),
      import('../fleet/commands.ts'),
      import('../functions.ts'),
      import('../kube-versions.ts'),
      import('../lint.ts'),
      import('../lint/rules.ts'),
      import('../manifests-policies.ts'),
      import('../output.ts'),
      import('../region.ts'),
      import('../secrets/index.ts'),
      import('../secret-actions.ts'),
      import('./shared.ts'),
    ]);
  return {
    readServerless: deploy.readServerless,
    fleetManifests: fleet.fleetManifests,
    loadFunctions: functions.loadFunctions,
    kubeTargetFrom: versions.kubeTargetFrom,
    enforcedWebhooks: versions.enforcedWebhooks,
    forKubeVersion: versions.forKubeVersion,
    registrationVersionFindings: versions.registrationVersionFindings,
    lintDocuments: lint.lintDocuments,
    lintRulesForVersion: rules.lintRulesForVersion,
    manifestPolicyFindings: policies.manifestPolicyFindings,
    renderDocuments: output.renderDocuments,
    writeOutput: output.writeOutput,
    regionFor: region.regionFor,
    PATH_SECRET_PLACEHOLDER: secrets.PATH_SECRET_PLACEHOLDER,
    withPathSecret: secretActions.withPathSecret,
    endpointsFrom: shared.endpointsFrom,
    manifestsFor: shared.manifestsFor,
    reportFindings: shared.reportFindings,
    kubeMinor: shared.kubeMinor,
  };
}

/** Writes the manifests `klw manifests` was asked for. */
async function writeManifests({ root, say }: CommandContext, options: ManifestsOptions): Promise<void> {
  if (!options.baseUrl === !options.functionUrls)
    throw new KlwError('give exactly one of --base-url or --function-urls');
  const m = await actionModules();
  const { readServerless, fleetManifests, loadFunctions, kubeTargetFrom, manifestPolicyFindings, regionFor } = m;
  const { withPathSecret, PATH_SECRET_PLACEHOLDER, endpointsFrom, manifestsFor, reportFindings } = m;
  const target = kubeTargetFrom(options);
  // Only the deployed secret needs serverless.yml: its service, and its region without --region.
  const config = options.pathSecret === 'ssm' ? readServerless(root()) : undefined;
  const secretOptions: PathSecretOptions = {
    pathSecret: options.pathSecret,
    stateDir: options.stateDir,
    stage: options.stage,
    region: regionFor(options, () => config),
    ...(config ? { service: String(config.service) } : {}),
  };
  // Loaded once: every cluster's manifests come from the same registrations.
  const functions = await loadFunctions(root());
  // The policies' findings of every cluster, reported with the clusters' own before anything is written.
  const policyFindings: Finding[] = [];
  const fleetDeps = {
    endpoints: endpointsFrom(options),
    report: (findings: Finding[]) => reportFindings([...policyFindings, ...findings]),
    say,
    registrations: functions.map((f) => f.registration),
    build: (e: Endpoints, cluster: FleetCluster) => {
      policyFindings.push(...manifestPolicyFindings(root(), functions, { cluster, ...(target ? { target } : {}) }));
      return manifestsFor(root(), e, options.name, { cluster, functions, ...(target ? { target } : {}) });
    },
  };
  if (await fleetManifests(root(), options, target, secretOptions, fleetDeps)) return;
  const set = await manifestsFor(
    root(),
    await withPathSecret(endpointsFrom(options), undefined, secretOptions),
    options.name,
    { crdPatches: !!options.crdPatches, functions, ...(target ? { target } : {}) },
  );
  const written = [set.documents, options.crdPatches ? set.crdPatches : []];
  if (secretOptions.pathSecret === 'placeholder' && JSON.stringify(written).includes(PATH_SECRET_PLACEHOLDER)) {
    say(
      `clientConfig.url holds the placeholder ${PATH_SECRET_PLACEHOLDER}, which the API server refuses until it ` +
        'is replaced by the secret; --path-secret ssm --stage <stage> (deployed) or --path-secret local (emulator) ' +
        'writes the secret',
    );
  }
  const { enforcedWebhooks, forKubeVersion, registrationVersionFindings, lintDocuments, lintRulesForVersion } = m;
  const { kubeMinor, renderDocuments, writeOutput } = m;
  const registrations = fleetDeps.registrations;
  const findings = manifestPolicyFindings(root(), functions, target ? { target } : {});
  // Without --kube-version, each registration's own kubernetesVersion compiles its conditions.
  if (!target) findings.push(...registrationVersionFindings(registrations));
  if (target) {
    const versioned = forKubeVersion(set.documents, target, enforcedWebhooks(registrations));
    // The conditions as that version's API server compiles a configuration being created.
    const conditions = lintDocuments(versioned.documents, target.version).filter((f) =>
      f.rule.startsWith('match-conditions'),
    );
    findings.push(...versioned.findings, ...conditions, ...lintRulesForVersion(set.documents, kubeMinor(target)));
    set.documents = versioned.documents;
  }
  reportFindings(findings);
  // With the local or deployed secret the URLs hold it: the files are readable by their owner only.
  const secret = secretOptions.pathSecret === 'local' || secretOptions.pathSecret === 'ssm';
  writeOutput(renderDocuments(set.documents, options.format), options.out, { secret });
  for (const patch of options.crdPatches ? set.crdPatches : []) {
    const file = resolve(options.crdPatches!, `${patch.crd}.conversion-patch.yaml`);
    writeOutput(renderDocuments([patch.patch], 'yaml'), file, { secret });
    say(`wrote ${file}`);
  }
  if (options.out) say(`wrote ${options.out} (${set.documents.length} objects)`);
}
