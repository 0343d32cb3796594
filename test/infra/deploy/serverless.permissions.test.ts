// docs/deploying.md's AWS permissions list every resource type of the CloudFormation template the
// plugin generates (serverless package, offline), with and without function URLs.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { stringify } from 'yaml';
import { readServerless } from '../../../infra/deploy/index.ts';
import { FIXTURE_FUNCTIONS } from '../../helpers.ts';
import { EVERY_PARAM, packagingProject, serverlessPackage } from './serverless-package.ts';

const root = process.cwd();
// Set up as serverless.test.ts sets up its project: the same packages serve both.
const { work, env } = packagingProject('.klw-test-permissions-', FIXTURE_FUNCTIONS);
const out = mkdtempSync(join(root, '.klw-test-permissions-out-'));
after(() => {
  rmSync(work, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
});
writeFileSync(join(work, 'serverless.yml'), stringify({ ...readServerless(root), service: 'klw-fixture' }));

/** The resource types of the documented permissions table (its first column). */
function documentedTypes(): Set<string> {
  const text = readFileSync(join(root, 'docs', 'deploying.md'), 'utf8');
  const section = text.slice(text.indexOf('## AWS permissions'));
  const table = section.split('\n').filter((l) => l.startsWith('| `AWS::'));
  return new Set(table.flatMap((row) => [...row.split('|')[1]!.matchAll(/`(AWS::[A-Za-z0-9:]+)`/g)].map((m) => m[1]!)));
}

/** The resource types of the templates `serverless package` writes with `params`. */
async function templateTypes(name: string, params: string[]): Promise<Set<string>> {
  const dir = join(out, name);
  const result = await serverlessPackage(work, ['--stage', 'test', ...params], dir, env);
  assert.equal(result.code, 0, result.stdout + result.stderr);
  const types = new Set<string>();
  for (const file of ['cloudformation-template-create-stack.json', 'cloudformation-template-update-stack.json']) {
    const template = JSON.parse(readFileSync(join(dir, file), 'utf8')) as {
      Resources: Record<string, { Type: string }>;
    };
    for (const resource of Object.values(template.Resources)) types.add(resource.Type);
  }
  return types;
}

describe('the AWS permissions klw deploy needs (docs/deploying.md)', () => {
  it('list every resource type of the generated template, and only such types', async () => {
    const documented = documentedTypes();
    assert.ok(documented.size >= 10, `the table lists ${documented.size} types: is it there?`);
    const generated = new Set([
      ...(await templateTypes('plain', [])),
      // Function URLs, provisioned concurrency, an alarm topic: every param that adds resources.
      ...(await templateTypes('params', EVERY_PARAM)),
    ]);
    assert.ok(generated.has('AWS::Lambda::Function'), [...generated].join(' '));
    const missing = [...generated].filter((t) => !documented.has(t));
    assert.deepEqual(missing, [], 'resource types the template creates that the docs do not list');
    const stray = [...documented].filter((t) => !generated.has(t));
    assert.deepEqual(stray, [], 'types the docs list that the template never creates');
  });
});
