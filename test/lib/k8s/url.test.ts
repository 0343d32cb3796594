import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseGoUrl, validateWebhookUrl } from '../../../lib/k8s/url.ts';
import { checkWebhookUrl, functionUrl } from '../../../infra/manifests.ts';
import { lintWebhook } from '../../../infra/lint.ts';

describe('webhook URLs as the API server parses them (Go net/url)', () => {
  // k8s.io/apiserver pkg/util/webhook/validation_test.go TestValidateWebhookURL: URL → first error.
  const kubernetesCases: Array<[string, RegExp | undefined]> = [
    ['https://127.0.0.1:8708', undefined],
    ['wrong url pattern', /scheme must be https/],
    ['https://127.0.0.1:8708#seree', /fragments are not permitted/],
    ['https://127.0.0.1:8708?seree', /query parameters are not permitted/],
  ];
  for (const [url, first] of kubernetesCases) {
    it(`Kubernetes case ${JSON.stringify(url)}`, () => {
      const problems = validateWebhookUrl(url);
      if (!first) assert.deepEqual(problems, []);
      else assert.match(problems[0]!, first);
    });
  }

  it('finds no host in https:///prod (WHATWG finds "prod")', () => {
    assert.equal(new URL('https:///prod').hostname, 'prod');
    const parsed = parseGoUrl('https:///prod');
    assert.equal(parsed.host, '');
    assert.equal(parsed.path, '/prod');
    assert.match(checkWebhookUrl('https:///prod')!, /host must be provided/);
    assert.throws(
      () => functionUrl('pod-policy', { baseUrl: 'https:///prod' }),
      /function pod-policy: .*host must be provided/,
    );
  });

  it('reads the parts as Go does', () => {
    assert.deepEqual(parseGoUrl('HTTPS://u:p%40ss@h.example.com:8443/a%2Fb?x=1#f%20g'), {
      scheme: 'https',
      opaque: '',
      user: { username: 'u', password: 'p@ss' },
      host: 'h.example.com:8443',
      path: '/a/b',
      rawQuery: 'x=1',
      forceQuery: false,
      fragment: 'f g',
    });
    // A rootless path after the scheme is opaque: no host.
    assert.equal(parseGoUrl('https:h.example.com/x').opaque, 'h.example.com/x');
    assert.equal(parseGoUrl('https:h.example.com/x').host, '');
    assert.equal(parseGoUrl('https://[fe80::1%25en0]:443/x').host, '[fe80::1%en0]:443');
    assert.equal(parseGoUrl('https://h.example.com/x?').forceQuery, true);
    assert.deepEqual(parseGoUrl('https://@h.example.com').user, { username: '' });
    assert.equal(parseGoUrl('//h.example.com/x').host, 'h.example.com');
    assert.equal(parseGoUrl('///h.example.com/x').host, '');
    assert.equal(parseGoUrl('*').path, '*');
    // Only the text after the last ':' must be a port.
    assert.equal(parseGoUrl('https://h.example.com:443:1/').host, 'h.example.com:443:1');
  });

  it("refuses what Go refuses, with Go's reason", () => {
    const cases: Array<[string, RegExp]> = [
      ['https://h.example.com:x/', /invalid port ":x" after host/],
      ['https://[::1/', /missing '\]' in host/],
      ['https://[::1]x/', /invalid port "x" after host/],
      ['https://h ex.com/', /invalid character " " in host name/],
      ['https://h%41.example.com/', /invalid URL escape "%41"/],
      ['https://h.example.com/%zz', /invalid URL escape "%zz"/],
      ['https://h.example.com/x#%', /invalid URL escape "%"/],
      ['https://a b@h.example.com/', /invalid userinfo/],
      ['https://h.example.com/\n', /invalid control character/],
      [':foo', /missing protocol scheme/],
      ['1a:b/c', /first path segment in URL cannot contain colon/],
      ['https://[fe80::1%25%2F]/', /invalid URL escape "%2F"/],
    ];
    for (const [url, reason] of cases) {
      assert.throws(() => parseGoUrl(url), reason, url);
      assert.match(validateWebhookUrl(url)[0]!, /^not a valid URL: parse "/, url);
    }
  });

  it("lists every broken rule, in the API server's order", () => {
    assert.deepEqual(
      validateWebhookUrl('http://u@/x?q#f').map((p) => p.split(' ')[0]),
      ['scheme', 'host', 'user', 'fragments', 'query'],
    );
    // Empty query and fragment are accepted, as the API server accepts them.
    assert.deepEqual(validateWebhookUrl('https://h.example.com/x?#'), []);
    // Non-ASCII host names and %-escaped non-ASCII bytes are Go-valid hosts.
    assert.deepEqual(validateWebhookUrl('https://bücher.example/x'), []);
    assert.equal(parseGoUrl('https://b%C3%BCcher.example/x').host, 'bücher.example');
  });

  it('lint reports the same rules for webhook and CRD URLs', () => {
    const findings = lintWebhook(
      {
        name: 'a.b.c',
        clientConfig: { url: 'https:///prod' },
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        rules: [],
      },
      'ValidatingWebhookConfiguration',
    );
    assert.ok(
      findings.some((f) => f.rule === 'client-config-url' && /host must be provided/.test(f.message)),
      JSON.stringify(findings),
    );
  });
});
