/**
 * The environment an expression compiles in: the shared one of the parts it reaches, or one that
 * declares further variables (and object types), a few kept as a policy's expressions share theirs.
 */
import type { Environment } from '../engine.ts';
import { installMeter } from '../cost/evaluation.ts';
import { installOptionalEntries } from './entries.ts';
import {
  environmentCovering,
  FULL_SCOPE,
  forgetEnvironments,
  partsOf,
  SCOPE,
  typedObjectsEnvironment,
} from './environment.ts';
import { precompiledForms } from '../precompiled.ts';

/** What of compile's options decides the environment (compile.ts's CompileOptions). */
interface EnvironmentOptions {
  typeCheck?: boolean;
  declarations?: Record<string, string>;
  types?: Record<string, Record<string, string>>;
}

/**
 * The environment an expression compiles in: declarations and object types given, or the shared
 * one. Without the type check, only the parts of the environment the expression names (partsOf),
 * and the libraries when `libraries` (it names them, or values of their types reach it): its
 * evaluation answers the same, and a cold start builds no more than it uses. The checker's
 * messages name what the environment declares, so a checked expression gets all of it.
 */
export function environmentOf(
  options: EnvironmentOptions,
  expression: string,
  libraries: boolean,
  whole = false,
): Environment {
  if (options.types) return typedEnvironment(options.types, options.declarations);
  // string() of the standard types only for an expression that calls it (the libraries have it too).
  const named = partsOf(expression);
  const unused = (libraries ? 0 : SCOPE.libraries) | (named & SCOPE.strings ? 0 : SCOPE.strings);
  const full = FULL_SCOPE & ~unused;
  const parts = named | (libraries ? SCOPE.libraries : 0);
  const scope = options.typeCheck === false && !whole ? parts | formsScope(options.declarations) : full;
  if (options.declarations) return declaredEnvironment(options.declarations, scope);
  return environmentCovering(scope);
}

/** formsScope's answers, by declarations, and the generation of the forms they were read from. */
const formScopes = new Map<string, number>();
let formScopesOf = -1;

/**
 * The parts of the environment (SCOPE, the libraries aside: their chunk loads apart) that the
 * precompiled expressions of `declarations` name together. A bundle's expressions are compiled in
 * one environment of them all, not one for each set of parts the first ones name: one built for
 * more parts answers the same (scope.test.ts), and a second build would cost a cold start more.
 */
function formsScope(declarations: Record<string, string> | undefined): number {
  const { forms, generation } = precompiledForms();
  if (generation !== formScopesOf) {
    formScopes.clear();
    for (const f of forms) {
      const key = JSON.stringify(f.declarations ?? null);
      formScopes.set(key, (formScopes.get(key) ?? 0) | partsOf(f.expression));
    }
    formScopesOf = generation;
  }
  return formScopes.get(JSON.stringify(declarations ?? null)) ?? 0;
}

/**
 * Environments with declarations (and object types), by them; a few kept, as a policy's expressions
 * share theirs: a clone with its meter costs milliseconds, which a cold start would pay for each.
 */
const typedEnvironments = new Map<string, Environment>();
/** How many such environments are kept: those of the kinds one policy is checked against. */
const TYPED_ENVIRONMENTS_KEPT = 16;

/** The matchConditions environment of `scope` (SCOPE) with further variables declared. */
function declaredEnvironment(declarations: Record<string, string>, scope: number): Environment {
  const key = JSON.stringify([scope, declarations]);
  if (!typedEnvironments.has(key))
    // One kept for more parts answers the same (scope.test.ts).
    for (let wider = scope + 1; wider <= FULL_SCOPE; wider++) {
      const env = (wider & scope) === scope && typedEnvironments.get(JSON.stringify([wider, declarations]));
      if (env) return env;
    }
  return kept(key, () => {
    const env = environmentCovering(scope).clone();
    for (const [name, type] of Object.entries(declarations)) env.registerVariable(name, type);
    return env;
  });
}

/** Forgets the environments built and kept so far (tests: the next ones are built again). */
export function forgetDeclaredEnvironments(): void {
  typedEnvironments.clear();
  forgetEnvironments();
}

/** A kept environment, or one made (its meter and optional entries installed) and kept. */
function kept(key: string, make: () => Environment): Environment {
  let env = typedEnvironments.get(key);
  if (env) return env;
  env = make();
  installMeter(env);
  installOptionalEntries(env);
  if (typedEnvironments.size >= TYPED_ENVIRONMENTS_KEPT)
    typedEnvironments.delete(typedEnvironments.keys().next().value!);
  typedEnvironments.set(key, env);
  return env;
}

/** The environment declaring `types` and `declarations` (`object` and `oldObject` dyn unless declared). */
function typedEnvironment(
  types: Record<string, Record<string, string>>,
  declarations: Record<string, string> = {},
): Environment {
  return kept(JSON.stringify([types, declarations]), () => {
    const env = typedObjectsEnvironment().clone();
    for (const [name, fields] of Object.entries(types)) env.registerType(name, { fields });
    for (const [name, type] of Object.entries({ object: 'dyn', oldObject: 'dyn', ...declarations }))
      env.registerVariable(name, type);
    return env;
  });
}
