import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import type { Command } from 'commander';
import { checkServerless, readServerless } from '../deploy/index.ts';
import { fleetConditionFindings } from '../fleet/manifests.ts';
import { ownHandlerFindings, loadFunctions } from '../functions.ts';
import {
  enforcedWebhooks,
  forKubeVersion,
  kubeTargetFrom,
  lintInFunctionConditions,
  registrationVersionFindings,
} from '../kube-versions.ts';
import { lintDocuments, lintFiles, lintRegistrations } from '../lint.ts';
import { lintProjectPolicies } from '../lint/policies.ts';
import { lintRulesForVersion, shippedCrds } from '../lint/rules.ts';
import { generateManifests } from '../manifests.ts';
import { readDocuments } from '../output.ts';
import type { CommandContext } from './context.ts';
import { featureGatesOption, kubeVersionOption, type KubeTargetOptions } from './options.ts';
import { kubeMinor, reportFindings } from './shared.ts';

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
