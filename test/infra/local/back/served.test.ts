// The back half as the front half sees it: a project's pools and condition threads as an Invoker.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ConditionPool } from '../../../../infra/local/back/condition-pool.ts';
import type { FunctionPool } from '../../../../infra/local/back/pool.ts';
import type { LocalProject } from '../../../../infra/local/back/project.ts';
import { projectInvoker } from '../../../../infra/local/back/served.ts';
import type { Registration } from '../../../../lib/internal.ts';

/** A stand-in project: two functions, one with matchConditions; what its pools and env were told. */
function fakeProject() {
  const calls: string[] = [];
  const registrations: Record<string, Partial<Registration>> = {
    gate: { name: 'gate', type: 'validating', matchConditions: [{ name: 'x', expression: 'true' }] },
    plain: { name: 'plain', type: 'validating' },
  };
  const pool = (name: string) =>
    ({
      invoke: async (event: unknown, requestId: string) => {
        calls.push(`invoke ${name} ${JSON.stringify(event)} ${requestId}`);
        return { kind: 'throttled', requestId };
      },
      update: () => calls.push(`update ${name}`),
    }) as unknown as FunctionPool;
  const project = {
    pools: new Map([
      ['gate', pool('gate')],
      ['plain', pool('plain')],
    ]),
    functions: Object.values(registrations).map((registration) => ({ name: registration.name, registration })),
    registration: (name: string) => registrations[name] as Registration | undefined,
    runtime: (reg: Registration) => ({ name: reg.name }),
    setExtraEnv: (name: string, value: string) => calls.push(`env ${name}=${value}`),
  } as unknown as LocalProject;
  return { project, calls };
}

describe('a project as an Invoker', () => {
  it('names its functions and invokes them by name; none for a name it does not serve', async () => {
    const { project, calls } = fakeProject();
    const invoker = projectInvoker(project);
    assert.deepEqual(invoker.names(), ['gate', 'plain']);
    assert.equal(invoker.registration('plain')?.name, 'plain');
    assert.deepEqual(await invoker.invoke('plain', { a: 1 }, 'r1'), { kind: 'throttled', requestId: 'r1' });
    assert.equal(invoker.invoke('gone', {}, 'r2'), undefined);
    assert.deepEqual(calls, ['invoke plain {"a":1} r1']);
  });

  it('screens only a function with matchConditions, in its own threads', async () => {
    const { project } = fakeProject();
    const asked: string[] = [];
    const conditions = (name: string) =>
      ({
        evaluate: async () => {
          asked.push(name);
          return undefined;
        },
      }) as unknown as ConditionPool;
    const invoker = projectInvoker(project, conditions);
    assert.equal(invoker.conditions('plain'), undefined);
    assert.equal(projectInvoker(project).conditions('gate'), undefined, 'no threads, no screen');
    const screen = invoker.conditions('gate');
    assert.ok(screen);
    assert.equal(await screen(project.registration('gate') as never, Buffer.from('{}'), 10), undefined);
    assert.deepEqual(asked, ['gate']);
  });

  it('renews the workers of the functions it is told, with a new variable for every function', () => {
    const { project, calls } = fakeProject();
    const invoker = projectInvoker(project);
    invoker.renew((name) => name === 'gate', { name: 'KLW_PATH_SECRET', value: 'next' });
    invoker.renew(() => true);
    assert.deepEqual(calls, ['env KLW_PATH_SECRET=next', 'update gate', 'update gate', 'update plain']);
  });
});
