import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type { Command } from 'commander';
import type { CommandContext } from './context.ts';
import { featureGatesOption, kubeVersionOption, type KubeTargetOptions } from './options.ts';

/**
 * What the lint runs, imported when it runs: the program lists the command's options without
 * loading the linter, the generator and the AWS SDK.
 */
async function lintModules() {
  const [deploy, fleet, functions, versions, lint, policies, rules, manifests, output, shared] = await Promise.all([
    import('../deploy/serverless.ts'),
    import('../fleet/manifests.ts'),
    import('../functions.ts'),
    import('../kube-versions.ts'),
    import('../lint.ts'),
    import('../lint/policies.ts'),
    import('../lint/rules.ts'),
    import('../manifests.ts'),
    import('../output.ts'),
    import('./shared.ts'),
  ]);
  return {
    ...deploy,
    ...fleet,
    ...functions,
    ...versions,
    ...lint,
    ...policies,
    ...rules,
    ...manifests,
    ...output,
    ...shared,
  };
}

/** Adds `klw lint`. */
export function register(cli: Command, { root, say }: CommandContext): void {
  cli
    .command('lint')
    .description(
      "check manifests (or, without files, the functions' registrations) against the API server's rules and the good practices",
    )
    .argument('[files...]', 'YAML or JSON manifests')
    .addOption(
      kubeVersionOption(
        "check CEL and say what this Kubernetes version's API server would refuse or drop (default: the newest)",
      ),
    )
    .addOption(featureGatesOption('feature gates on in that API server (AdmissionWebhookMatchConditions=true)'))
    .action(async (files: string[], options: KubeTargetOptions) => {
      const m = await lintModules();
      const { checkServerless, readServerless, fleetConditionFindings, ownHandlerFindings, loadFunctions } = m;
      const { enforcedWebhooks, forKubeVersion, kubeTargetFrom, lintInFunctionConditions } = m;
      const { registrationVersionFindings, lintDocuments, lintFiles, lintRegistrations, lintProjectPolicies } = m;
      const { lintRulesForVersion, shippedCrds, generateManifests, readDocuments, kubeMinor, reportFindings } = m;
      const target = kubeTargetFrom(options);
      const functions = files.length ? [] : await loadFunctions(root());
      const registrations = functions.map((f) => f.registration);
      const generated = files.length
        ? []
        : generateManifests(root(), registrations, { baseUrl: 'https://webhooks.example.com' }).documents;
      // The project's other CRDs, as what its rules may name (their own conversion is not linted here).
      if (!files.length) generated.push(...shippedCrds(root(), generated));
      const findings = files.length
        ? lintFiles(files, target?.version)
        : [
            ...lintRegistrations(registrations),
            ...lintDocuments(generated, target?.version),
            ...lintInFunctionConditions(registrations),
            // --kube-version stands for every registration's own kubernetesVersion.
            ...(target ? [] : registrationVersionFindings(registrations)),
            ...fleetConditionFindings(root(), registrations),
            ...lintProjectPolicies(root(), functions, target),
          ];
      if (target && !findings.some((f) => f.level === 'error')) {
        const documents = files.length ? files.flatMap((f) => readDocuments(f)) : generated;
        findings.push(...forKubeVersion(documents, target, enforcedWebhooks(registrations)).findings);
        findings.push(...lintRulesForVersion(documents, kubeMinor(target)));
      }
      if (!files.length && existsSync(resolve(root(), 'serverless.yml'))) {
        findings.push(
          ...checkServerless(
            readServerless(root()),
            functions.map((f) => f.registration),
          ),
        );
      }
      findings.push(...ownHandlerFindings(root(), functions));
      // A finding about a function's webhook names the file to fix.
      for (const finding of findings) {
        const fn = functions.find((f) =>
          [f.registration.name, (f.registration as { webhookName?: string }).webhookName].includes(finding.subject),
        );
        const file = fn && relative(root(), fn.entry).split('\\').join('/');
        if (file && !finding.message.includes(file)) finding.message += ` (${file})`;
      }
      reportFindings(findings);
      say(`lint: ${findings.length ? `${findings.length} warning${findings.length > 1 ? 's' : ''}` : 'no findings'}`);
    });
}
