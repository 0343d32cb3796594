// What `klw manifests` runs, imported by its action when it runs (commands/manifests.ts): the
// program lists the command's options without loading the generator, the linter and the AWS SDK.
import { resolve } from 'node:path';
import { readServerless } from '../deploy/serverless.ts';
import { KlwError } from '../errors.ts';
import { type FleetManifestOptions, fleetManifests } from '../fleet/commands.ts';
import type { FleetCluster } from '../fleet/file.ts';
import { loadFunctions } from '../functions.ts';
import { enforcedWebhooks, forKubeVersion, kubeTargetFrom, registrationVersionFindings } from '../kube-versions.ts';
import { lintDocuments } from '../lint.ts';
import type { Finding } from '../lint/finding.ts';
import { lintRulesForVersion } from '../lint/rules.ts';
import type { Endpoints } from '../manifests.ts';
import { manifestPolicyFindings } from '../manifests-policies.ts';
import { renderDocuments, writeOutput } from '../output.ts';
import { regionFor } from '../region.ts';
import { type PathSecretOptions, withPathSecret } from '../secret-actions.ts';
import { PATH_SECRET_PLACEHOLDER } from '../secrets/index.ts';
import type { CommandContext } from './context.ts';
import type { KubeTargetOptions, RegionOptions, StageOptions, StateDirOptions } from './options.ts';
import { type EndpointOptions, endpointsFrom, kubeMinor, manifestsFor, reportFindings } from './shared.ts';

/** The options of `klw manifests`. */
export interface ManifestsOptions
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

/** Writes the manifests `klw manifests` was asked for. */
export async function writeManifests({ root, say }: CommandContext, options: ManifestsOptions): Promise<void> {
  if (!options.baseUrl === !options.functionUrls)
    throw new KlwError('give exactly one of --base-url or --function-urls');
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
