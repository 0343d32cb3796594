/**
 * The environment an expression compiles in: the shared one of the parts it reaches, or one that
 * declares further variables (and object types), a few kept as a policy's expressions share theirs.
 */
import type { Environment } from '../engine.ts';
import { installMeter } from '../cost/evaluation.ts';
import { installOptionalEntries } from './entries.ts';
import { FULL_SCOPE, SCOPE, scopedEnvironment, scopeOf, typedObjectsEnvironment } from './environment.ts';

/** What of compile's options decides the environment (compile.ts's CompileOptions). */
interface EnvironmentOptions {
  typeCheck?: boolean;
  declarations?: Record<string, string>;
  types?: Record<string, Record<string, string>>;
}

/**
 * The environment an expression compiles in: declarations and object types given, or the shared
 * one. Without the type check, only the parts of the environment the expression names (scopeOf):
 * its evaluation answers the same, and a cold start builds no more than it uses. The checker's
 * messages name what the environment declares, so a checked expression gets all of it.
 */
export function environmentOf(
  options: EnvironmentOptions,
  expression: string,
  libraries: boolean,
  whole = false,
): Environment {
  if (options.types) return typedEnvironment(options.types, options.declarations);
  const full = libraries ? FULL_SCOPE : FULL_SCOPE & ~SCOPE.libraries;
  const scope = options.typeCheck === false && !whole ? scopeOf(expression) : full;
  if (options.declarations) return declaredEnvironment(options.declarations, scope);
  return scopedEnvironment(scope);
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
  return kept(key, () => {
    const env = scopedEnvironment(scope).clone();
    for (const [name, type] of Object.entries(declarations)) env.registerVariable(name, type);
    return env;
  });
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
