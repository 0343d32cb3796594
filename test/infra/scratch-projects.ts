// Scratch projects for tests that load or build functions: made inside the repository, so that
// `kube-lambda-webhooks` resolves to this package, and removed when the test file ends; and the
// functions and reviews such tests share.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';
import type { KubeObject } from '../../lib/index.ts';
import { admissionReview } from '../../lib/testing/index.ts';
import { keptProject } from '../kept-projects.ts';

/** A validating function named `webhook` that loads and registers as it should. */
export const GOOD_WEBHOOK = (webhook: string) =>
  "import { allow, defineValidatingWebhook, on, Pod } from 'kube-lambda-webhooks';\n" +
  `export default defineValidatingWebhook({ name: '${webhook}', rules: [on(Pod).create()], validate: () => allow() });\n`;

/**
 * A maker of projects whose functions/<name>/index.ts hold the given code, each removed after the
 * calling test file's tests (call it at the file's top level).
 */
export function scratchProjects(): (functions: Record<string, string>) => string {
  const made: string[] = [];
  after(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  return (functions) => {
    const root = mkdtempSync(join(process.cwd(), '.klw-test-'));
    made.push(root);
    writeFunctions(root, functions);
    return root;
  };
}

/** Writes each function's code into `root`'s functions/<name>/index.ts. */
function writeFunctions(root: string, functions: Record<string, string>): void {
  for (const [name, code] of Object.entries(functions)) {
    mkdirSync(join(root, 'functions', name), { recursive: true });
    writeFileSync(join(root, 'functions', name, 'index.ts'), code);
  }
}

/**
 * A project whose functions/<name>/index.ts hold the given code, kept across runs by content
 * (test/kept-projects.ts: `name` must be its own), so that the loader's build of its functions
 * is found again: for a test that only loads the functions, and changes none of the files.
 */
export function keptFunctions(name: string, functions: Record<string, string>): Promise<string> {
  return keptProject(name, (dir) => writeFunctions(dir, functions));
}

/** The rules of a function that sees the creation of pods, as a source text. */
const POD_CREATE_RULES =
  "[{ operations: ['CREATE' as const], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'] }]";

/**
 * A validating function `name` enforcing one condition in-function (`expression`): only the pods
 * it matches reach `validate`, which denies them as 'frozen'; the others are admitted.
 */
export const CONDITION_GATE = (
  name: string,
  expression: string,
) => `import { deny, defineValidatingWebhook } from 'kube-lambda-webhooks';
import { enforceMatchConditions } from 'kube-lambda-webhooks/matchconditions';
const webhook = defineValidatingWebhook(enforceMatchConditions({
  name: '${name}',
  auth: 'none' as const,
  rules: ${POD_CREATE_RULES},
  matchConditions: [{ name: 'web', expression: ${JSON.stringify(expression)} }],
  validate: () => deny('frozen'),
}));
export const handler = webhook.handler;
export default webhook;
`;

/** A validating policy `name`, served as a webhook, that denies a pod creation with `message` where `expression` is false. */
export const POD_POLICY = (
  name: string,
  expression: string,
  message: string,
) => `import { defineValidatingPolicy } from 'kube-lambda-webhooks/policies';
const policy = defineValidatingPolicy({
  name: '${name}',
  auth: 'none' as const,
  matchConstraints: { resourceRules: ${POD_CREATE_RULES} },
  validations: [{ expression: ${JSON.stringify(expression)}, message: ${JSON.stringify(message)} }],
});
export const handler = policy.handler;
export default policy;
`;

/** The AdmissionReview of the creation of a pod `name` in the namespace `default`. */
export const podReview = (name: string) =>
  admissionReview({ apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' } } as KubeObject, {
    namespace: 'default',
  });
