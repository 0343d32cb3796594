// What `klw lint` runs on manifest files, called as its action calls it: the findings reported,
// the count said last, and an error when any finding is one.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { lint } from '../../../infra/commands/lint-action.ts';
import { withCapturedOutput } from '../../helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'klw-lint-action-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A webhook configuration whose one rule takes `operation`. */
function configuration(operation: string): string {
  return [
    'apiVersion: admissionregistration.k8s.io/v1',
    'kind: ValidatingWebhookConfiguration',
    'metadata: { name: x }',
    'webhooks:',
    '  - name: a.example.com',
    '    admissionReviewVersions: [v1]',
    '    sideEffects: None',
    '    failurePolicy: Fail',
    '    timeoutSeconds: 5',
    '    clientConfig: { url: "https://h.example.com/a" }',
    `    rules: [{ apiGroups: [""], apiVersions: [v1], operations: [${operation}], resources: [pods], scope: Namespaced }]`,
    '',
  ].join('\n');
}

/** Runs the lint action on one file holding `text`: what it said, and what it threw. */
async function lintFile(name: string, text: string): Promise<{ said: string[]; stderr: string; error?: Error }> {
  const file = join(dir, name);
  writeFileSync(file, text);
  const said: string[] = [];
  const context = {
    root: () => dir,
    say: (line: string) => said.push(line),
    runServerless: async () => ({ code: 0, stdout: '', stderr: '' }),
  };
  const { result, stderr } = await withCapturedOutput(() =>
    lint(context, [file], {}).then(
      () => undefined,
      (err: Error) => err,
    ),
  );
  return { said, stderr, ...(result ? { error: result } : {}) };
}

describe('klw lint, its action', () => {
  it('reports the warnings of a file and counts them', async () => {
    const run = await lintFile('ok.yaml', configuration('CREATE'));
    assert.equal(run.error, undefined);
    assert.match(run.stderr, /^warning system-namespaces a\.example\.com: /m);
    assert.deepEqual(run.said, ['lint: 1 warning']);
  });

  it('fails on an error, naming the field', async () => {
    const run = await lintFile('bad.yaml', configuration('MAKE'));
    assert.match(
      run.stderr,
      /^error rule-operations a\.example\.com: rules\[0\]\.operations: unknown operation "MAKE"$/m,
    );
    assert.match(String(run.error?.message), /^1 lint error; fix them before registering$/);
    assert.deepEqual(run.said, []);
  });
});
