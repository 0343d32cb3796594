// What `klw lint` runs, imported by its action when it runs (commands/lint.ts): the program lists
// the command's options without loading the linter, the generator and the library.
import { existsSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { checkServerless, readServerless } from '../deploy/serverless.ts';
import { fleetConditionFindings } from '../fleet/manifests.ts';
import { loadFunctions, ownHandlerFindings } from '../functions.ts';
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
import type { KubeTargetOptions } from './options.ts';
import { kubeMinor, reportFindings } from './shared.ts';

/** Lints the manifests `files`, or without files the project's functions, and reports the findings. */
export async function lint({ root, say }: CommandContext, files: string[], options: KubeTargetOptions): Promise<void> {
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
}
