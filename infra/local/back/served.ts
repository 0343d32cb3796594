// The back half behind the one interface: a project's worker pools and matchConditions threads
// as an Invoker.
import type { Invoker } from '../invoker.ts';
import type { ConditionPool } from './condition-pool.ts';
import { hasMatchConditions } from './match-conditions.ts';
import type { LocalProject } from './project.ts';

/**
 * The Invoker of a project: its functions' worker pools, and (when `conditions` is given) the
 * threads that evaluate a function's matchConditions before it is invoked.
 */
export function projectInvoker(project: LocalProject, conditions?: (name: string) => ConditionPool): Invoker {
  return {
    names: () => [...project.pools.keys()],
    registration: (name) => project.registration(name),
    invoke: (name, event, requestId) => project.pools.get(name)?.invoke(event, requestId),
    conditions: (name) =>
      conditions && hasMatchConditions(project.registration(name))
        ? (registration, body, timeoutMs, signal) => conditions(name).evaluate(registration, body, timeoutMs, signal)
        : undefined,
    renew: (which, variable) => {
      if (variable) project.setExtraEnv(variable.name, variable.value);
      for (const fn of project.functions)
        if (which(fn.name)) project.pools.get(fn.name)?.update(project.runtime(fn.registration));
    },
  };
}
