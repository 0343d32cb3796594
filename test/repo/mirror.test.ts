// Tests mirror the sources: test/lib/admission/patch.test.ts tests lib/admission/patch.ts, and
// test/lib/admission/decision.warnings.test.ts one aspect of lib/admission/decision.ts. Every source
// of lib/ and infra/ has its tests, or is in UNTESTED: a list that may only shrink.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { describe, it } from 'node:test';
import { sources } from './imports.ts';

/** The folders whose sources the tests mirror. */
const MIRRORED = ['lib', 'infra'];

/**
 * Sources with no test of their own yet, each tested only through others. Remove a file from here
 * when it gets its test; the test fails on a file listed here that has one.
 */
const UNTESTED: readonly string[] = [
  'infra/audit/access.ts',
  'infra/audit/discovery.ts',
  'infra/audit/index.ts',
  'infra/audit/kubeapi.ts',
  'infra/audit/kubeconfig.ts',
  'infra/audit/limits.ts',
  'infra/audit/report.ts',
  'infra/auth-config.ts',
  'infra/bin/klw.mjs',
  'infra/bin/serverless-plugin.mjs',
  'infra/commands/audit.ts',
  'infra/commands/auth-config.ts',
  'infra/commands/build.ts',
  'infra/commands/context.ts',
  'infra/commands/deploy.ts',
  'infra/commands/init.ts',
  'infra/commands/lint.ts',
  'infra/commands/local.ts',
  'infra/commands/logs.ts',
  'infra/commands/new.ts',
  'infra/commands/secret.ts',
  'infra/commands/shared.ts',
  'infra/commands/smoke.ts',
  'infra/commands/start.ts',
  'infra/deploy/alarms.ts',
  'infra/deploy/index.ts',
  'infra/deploy/params.ts',
  'infra/deploy/smoke.ts',
  'infra/errors.ts',
  'infra/fleet/alarms.ts',
  'infra/fleet/yaml-text.ts',
  'infra/gen/kube-resources.ts',
  'infra/gen/smd-schemas.ts',
  'infra/lint/finding.ts',
  'infra/lint/rule-check.ts',
  'infra/lint/shape.ts',
  'infra/loader/child.mjs',
  'infra/loader/child.ts',
  'infra/local/back/environment.ts',
  'infra/local/index.ts',
  'infra/local/back/project.ts',
  'infra/local/front/results.ts',
  'infra/local/back/runtime.ts',
  'infra/local/sample.ts',
  'infra/local/back/timer.ts',
  'infra/local/back/worker.mjs',
  'infra/node-download.ts',
  'infra/pack/api.mjs',
  'infra/pack/build.mjs',
  'infra/region.ts',
  'infra/runtimes.ts',
  'infra/secret-actions.ts',
  'infra/secrets/index.ts',
  'infra/version.ts',
  'lib/admission/freeze.ts',
  'lib/conversion/verify.ts',
  'lib/deadline.ts',
  'lib/gateway/sources/alb.ts',
  'lib/gateway/sources/emulate.ts',
  'lib/gateway/sources/fields.ts',
  'lib/gateway/sources/function-url.ts',
  'lib/gateway/sources/http-api.ts',
  'lib/gateway/sources/payload-v2.ts',
  'lib/gateway/sources/rest.ts',
  'lib/gateway/sources/types.ts',
  'lib/handler/types.ts',
  'lib/harness/discover.ts',
  'lib/harness/events.ts',
  'lib/harness/failure-message.ts',
  'lib/harness/invoke.ts',
  'lib/harness/reviews.ts',
  'lib/index.ts',
  'lib/internal.ts',
  'lib/k8s/resource-table.ts',
  'lib/k8s/resources.ts',
  'lib/matchconditions/object-construction.ts',
  'lib/matchconditions/rules.ts',
  'lib/parameters.ts',
  'lib/policies/cel.ts',
  'lib/policies/generic/conditions.ts',
  'lib/policies/generic/equivalent.ts',
  'lib/policies/generic/types.ts',
  'lib/policies/index.ts',
  'lib/policies/mutating/define.ts',
  'lib/policies/mutating/evaluate.ts',
  'lib/policies/mutating/mutation.ts',
  'lib/policies/mutating/smd/builtin-schema.ts',
  'lib/policies/mutating/smd/crd.ts',
  'lib/policies/mutating/smd/merge.ts',
  'lib/policies/mutating/smd/schema.ts',
  'lib/policies/mutating/smd/typed.ts',
  'lib/policies/mutating/types.ts',
  'lib/policies/validating/types.ts',
  'lib/registration.ts',
  'lib/review/response-schemas.ts',
  'lib/review/schemas.ts',
  'lib/review/types.ts',
  'lib/testing/chain-types.ts',
  'lib/testing/conformance-conversion.ts',
  'lib/testing/conformance-shared.ts',
  'lib/testing/index.ts',
  'lib/testing/policies.ts',
  'lib/testing/schema-sample.ts',
];

/** The source a test file mirrors: `test/lib/a/b.aspect.test.ts` -> `lib/a/b`, without the ending. */
export function mirroredSource(test: string): string {
  const name = basename(test).replace(/\.test\.ts$/, '');
  return join(dirname(test).replace(/^test\//, ''), name.split('.')[0]!)
    .split('\\')
    .join('/');
}

/** The test files under test/<folder>/, relative to the repository. */
function testsOf(folder: string): string[] {
  return readdirSync(join('test', folder), { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile() && d.name.endsWith('.test.ts'))
    .map((d) => join(d.parentPath, d.name).split('\\').join('/'));
}

const tests = MIRRORED.flatMap(testsOf);
const tested = new Set(tests.map(mirroredSource));
const all = MIRRORED.flatMap(sources).map((s) => s.split('\\').join('/'));

describe('tests mirror the sources', () => {
  it('names each test file after the source file it tests', () => {
    const orphans = tests.filter((t) => !['.ts', '.mjs'].some((ending) => existsSync(mirroredSource(t) + ending)));
    assert.deepEqual(
      orphans,
      [],
      'name each test after the file it tests: test/lib/a/b.test.ts for lib/a/b.ts, test/lib/a/b.<aspect>.test.ts for one aspect of it',
    );
  });

  it('gives every source file its tests', () => {
    const missing = all.filter((s) => !tested.has(s.replace(/\.(ts|mjs)$/, '')) && !UNTESTED.includes(s));
    assert.deepEqual(missing, [], 'add test/<source>.test.ts for each of these');
  });

  it('lets the list of untested sources only shrink', () => {
    const stale = UNTESTED.filter((s) => !all.includes(s) || tested.has(s.replace(/\.(ts|mjs)$/, '')));
    assert.deepEqual(stale, [], 'these have tests now or are gone: remove them from UNTESTED');
  });

  it('maps a test to its source, aspects included', () => {
    assert.equal(mirroredSource('test/lib/admission/decision.warnings.test.ts'), 'lib/admission/decision');
    assert.equal(mirroredSource('test/infra/cli.test.ts'), 'infra/cli');
  });
});
