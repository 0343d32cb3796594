// The library's errors share one base, WebhookError, each kind with a stable code of its own.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { AuthConfigError } from '../../lib/auth.ts';
import { DeadlineExceeded } from '../../lib/deadline.ts';
import { ConversionError, WebhookError } from '../../lib/index.ts';
import { GoUrlError } from '../../lib/k8s/url.ts';
import { ParameterTimeout } from '../../lib/parameters.ts';
import { sources } from '../repo/imports.ts';

/** `file: class` for every class of the files that extends Error (or a subclass of it) but not WebhookError. */
export function looseErrors(files: Array<{ file: string; text: string }>): string[] {
  const declared = /class\s+(\w+)\s+extends\s+(\w*Error)\b/g;
  return files.flatMap(({ file, text }) =>
    [...text.matchAll(declared)]
      .filter((m) => m[2] !== 'WebhookError' && !(file === 'lib/errors.ts' && m[1] === 'WebhookError'))
      .map((m) => `${file}: ${m[1]}`),
  );
}

describe('the errors of the library', () => {
  it('all extend WebhookError: no other Error subclass in lib/', () => {
    const files = sources('lib').map((file) => ({ file, text: readFileSync(file, 'utf8') }));
    assert.ok(files.length > 50);
    assert.deepEqual(looseErrors(files), []);
    assert.deepEqual(
      looseErrors([
        {
          file: 'lib/x.ts',
          text: 'class A extends Error {}\nclass B extends WebhookError {}\nclass C extends TypeError {}',
        },
      ]),
      ['lib/x.ts: A', 'lib/x.ts: C'],
    );
  });

  it('tells each kind apart by class, name and a code of its own', () => {
    const errors: WebhookError[] = [
      new ConversionError('cannot convert'),
      new AuthConfigError('no secret'),
      new DeadlineExceeded(100),
      new ParameterTimeout('/p', 10),
      new GoUrlError('http://[', 'missing ]'),
    ];
    for (const err of errors) {
      assert.ok(err instanceof WebhookError && err instanceof Error, err.name);
      assert.match(err.code, /^[A-Z]+(_[A-Z]+)*$/, err.name);
    }
    assert.deepEqual(
      errors.map((e) => [e.name, e.code]),
      [
        ['ConversionError', 'CONVERSION_FAILED'],
        ['AuthConfigError', 'AUTH_MISCONFIGURED'],
        ['DeadlineExceeded', 'DEADLINE_EXCEEDED'],
        ['ParameterTimeout', 'PARAMETER_TIMEOUT'],
        ['GoUrlError', 'URL_INVALID'],
      ],
    );
    // Every code names one kind, in the whole library.
    const codes = sources('lib').flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/readonly code = '([A-Z_]+)'/g)].map((m) => m[1]!),
    );
    assert.ok(codes.length >= 8, codes.join());
    assert.equal(new Set(codes).size, codes.length, codes.join());
  });
});
