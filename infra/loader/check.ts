// What a function module must export, checked where it is loaded: in the loader's child process
// (infra/loader/child.ts) for every command, and in klw's own process for the audit, which runs it.
import type { AdmissionWebhook } from '../../lib/admission/webhook.ts';
import type { ConversionWebhook, Registration } from '../../lib/internal.ts';
import { KlwError } from '../errors.ts';
import type { PolicyRegistration } from '../policies/registration.ts';

/** What a function module lacks when it has no default registration (nor `handler`), and the fix. */
export const NO_REGISTRATION =
  'exports no default registration: end it with `export default defineValidatingWebhook({...})` ' +
  '(or defineMutatingWebhook, defineConversionWebhook); klw build makes the Lambda handler from it';

/** A value as an error names it: `a string`, `an object`, `null`. */
function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  const type = typeof value;
  return `${/^[aeiou]/.test(type) ? 'an' : 'a'} ${type}`;
}

/** A function module's exports, as far as klw reads them. */
export type FunctionModule = { default?: AdmissionWebhook | ConversionWebhook; handler?: unknown };

/** What a loaded module registers: its webhook, and whether it exports a handler of its own. */
export interface CheckedModule {
  webhook: AdmissionWebhook | ConversionWebhook;
  registration: Registration;
  ownHandler: boolean;
}

/** Reads a policy's native objects from a loaded module's default export (policies/registration.ts). */
export type PolicyReader = (webhook: object, file: string) => PolicyRegistration | undefined;

/**
 * The policy reader, imported only for a module that declares a policy: it pulls in the CEL
 * engine, which would more than double what a loader child costs to start for plain webhooks.
 */
async function policyReader(): Promise<PolicyReader> {
  return (await import('../policies/registration.ts')).policyRegistrationOf;
}

/** True when a default export declares a validating or mutating policy. */
function declaresPolicy(webhook: object): boolean {
  const { validatingPolicy, mutatingPolicy } = webhook as { validatingPolicy?: unknown; mutatingPolicy?: unknown };
  return Boolean(validatingPolicy || mutatingPolicy);
}

/**
 * Reads the registration a function module exports (`file`, relative to the project, names it
 * in errors): a default registration whose name is the folder's, and no `handler` export that is
 * not a function. `readPolicy` gives the policy reader (tests see when it is asked for).
 */
export async function checkModule(
  name: string,
  file: string,
  mod: FunctionModule,
  readPolicy: () => Promise<PolicyReader> = policyReader,
): Promise<CheckedModule> {
  const webhook = mod.default;
  if (!webhook?.registration || typeof webhook.handler !== 'function') {
    const problem =
      webhook === undefined
        ? NO_REGISTRATION
        : `exports default ${describe(webhook)}, not a registration: export default the value ` +
          'defineValidatingWebhook, defineMutatingWebhook or defineConversionWebhook returns';
    throw new KlwError(`${file} ${problem}`);
  }
  if (mod.handler !== undefined && typeof mod.handler !== 'function') {
    throw new KlwError(
      `${file} exports handler as ${describe(mod.handler)}, not a function: remove that export ` +
        '(klw build makes the handler from the default export) or export webhook.handler',
    );
  }
  if (webhook.registration.name !== name) {
    throw new KlwError(
      `${file}: function ${name} registers the name "${webhook.registration.name}"; ` +
        "the folder and the registration's name must match: rename one",
    );
  }
  const ownHandler = typeof mod.handler === 'function' && mod.handler !== webhook.handler;
  // A policy registers its native objects beside its webhook: every command reads them from here.
  const policy = declaresPolicy(webhook) ? (await readPolicy())(webhook, file) : undefined;
  const registration = policy ? { ...webhook.registration, policy } : webhook.registration;
  return { webhook, registration, ownHandler };
}
