import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lintDocuments, lintWebhook } from '../../infra/lint.ts';

const good = () => ({
  name: 'good.webhooks.example.com',
  clientConfig: { url: 'https://hooks.example.com/good' },
  rules: [{ operations: ['CREATE'], apiGroups: [''], apiVersions: ['v1'], resources: ['pods'], scope: 'Namespaced' }],
  namespaceSelector: {
    matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }],
  },
  failurePolicy: 'Fail',
  matchPolicy: 'Equivalent',
  sideEffects: 'None',
  timeoutSeconds: 5,
  admissionReviewVersions: ['v1'],
});
const rulesOf = (
  changes: (w: any) => void,
  kind: 'ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration' = 'ValidatingWebhookConfiguration',
) => {
  const w: any = good();
  changes(w);
  return lintWebhook(w, kind).map((f) => `${f.level} ${f.rule}`);
};

describe('klw lint', () => {
  it('finds nothing in a good webhook', () => {
    assert.deepEqual(
      rulesOf(() => {}),
      [],
    );
  });

  const cases: Array<
    [string, (w: any) => void, string, ('ValidatingWebhookConfiguration' | 'MutatingWebhookConfiguration')?]
  > = [
    [
      'a two-segment name',
      (w) => {
        w.name = 'a.b';
      },
      'error webhook-name',
    ],
    [
      'an upper-case name',
      (w) => {
        w.name = 'A.b.c';
      },
      'error webhook-name',
    ],
    [
      'url and service',
      (w) => {
        w.clientConfig.service = { name: 's', namespace: 'n' };
      },
      'error client-config',
    ],
    [
      'an http url',
      (w) => {
        w.clientConfig.url = 'http://h.example.com';
      },
      'error client-config-url',
    ],
    [
      'a timeout of 31',
      (w) => {
        w.timeoutSeconds = 31;
      },
      'error timeout-range',
    ],
    [
      'a timeout of 0',
      (w) => {
        w.timeoutSeconds = 0;
      },
      'error timeout-range',
    ],
    [
      'a timeout of 15',
      (w) => {
        w.timeoutSeconds = 15;
      },
      'warning timeout-long',
    ],
    [
      'no sideEffects',
      (w) => {
        delete w.sideEffects;
      },
      'error side-effects',
    ],
    [
      'sideEffects Some',
      (w) => {
        w.sideEffects = 'Some';
      },
      'error side-effects',
    ],
    [
      'no review versions',
      (w) => {
        w.admissionReviewVersions = [];
      },
      'error review-versions',
    ],
    [
      'only unknown review versions',
      (w) => {
        w.admissionReviewVersions = ['v2'];
      },
      'error review-versions',
    ],
    [
      'duplicate review versions',
      (w) => {
        w.admissionReviewVersions = ['v1', 'v1'];
      },
      'error review-versions',
    ],
    [
      'an unknown operation',
      (w) => {
        w.rules[0].operations = ['PATCH'];
      },
      'error rule-operations',
    ],
    [
      '"*" with other operations',
      (w) => {
        w.rules[0].operations = ['*', 'CREATE'];
      },
      'error rule-wildcard',
    ],
    [
      '"*/*" with other resources',
      (w) => {
        w.rules[0].resources = ['*/*', 'pods'];
      },
      'error rule-resources',
    ],
    [
      'a bad scope',
      (w) => {
        w.rules[0].scope = 'Everywhere';
      },
      'error rule-scope',
    ],
    [
      'no system-namespace exclusion',
      (w) => {
        delete w.namespaceSelector;
      },
      'warning system-namespaces',
    ],
    ['a mutating webhook that fails closed', () => {}, 'warning mutating-fails-closed', 'MutatingWebhookConfiguration'],
    [
      'matchPolicy Exact',
      (w) => {
        w.matchPolicy = 'Exact';
      },
      'warning match-policy-exact',
    ],
    [
      'rules on leases',
      (w) => {
        w.rules[0].apiGroups = ['coordination.k8s.io'];
        w.rules[0].resources = ['leases'];
      },
      'warning protected-resources',
    ],
    [
      'rules on every resource',
      (w) => {
        w.rules[0].apiGroups = ['*'];
        w.rules[0].resources = ['*'];
      },
      'warning protected-resources',
    ],
    [
      'rules on subjectaccessreviews',
      (w) => {
        w.rules[0].apiGroups = ['authorization.k8s.io'];
        w.rules[0].resources = ['subjectaccessreviews'];
      },
      'warning protected-resources',
    ],
    [
      '65 matchConditions',
      (w) => {
        w.matchConditions = Array.from({ length: 65 }, (_, i) => ({ name: `c${i}`, expression: 'true' }));
      },
      'error match-conditions-count',
    ],
    [
      'duplicate matchConditions',
      (w) => {
        w.matchConditions = [
          { name: 'a', expression: 'true' },
          { name: 'a', expression: 'false' },
        ];
      },
      'error match-conditions-duplicate',
    ],
    [
      'a regex literal RE2 refuses (lookahead)',
      (w) => {
        w.matchConditions = [{ name: 'team', expression: "object.metadata.name.matches('^(?!kube-)')" }];
      },
      'error match-conditions-compile',
    ],
    [
      'a regex literal RE2 refuses (backreference)',
      (w) => {
        w.matchConditions = [{ name: 'team', expression: "object.metadata.name.find('(a)\\\\1') == ''" }];
      },
      'error match-conditions-compile',
    ],
    [
      'cel.bind, not in the API server environment',
      (w) => {
        w.matchConditions = [{ name: 'bound', expression: 'cel.bind(n, object.metadata.name, n == "x")' }];
      },
      'error match-conditions-compile',
    ],
    [
      'a selector In without values',
      (w) => {
        w.objectSelector = { matchExpressions: [{ key: 'a', operator: 'In' }] };
      },
      'error selector-values',
    ],
  ];
  it('passes matchConditions the API server accepts, RE2 regex literals among them', () => {
    const findings = rulesOf((w) => {
      w.matchConditions = [
        {
          name: 'team',
          expression:
            "object.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$') && url('https://x.example.com').getHost() != ''",
        },
      ];
    });
    assert.deepEqual(
      findings.filter((f) => f.includes('match-conditions')),
      [],
    );
  });

  for (const [name, change, finding, kind] of cases) {
    it(`reports ${finding} for ${name}`, () => {
      assert.ok(rulesOf(change, kind).includes(finding), `${rulesOf(change, kind).join(', ') || 'no findings'}`);
    });
  }

  it('reports webhook names that are not unique in a configuration', () => {
    const findings = lintDocuments([
      { kind: 'ValidatingWebhookConfiguration', metadata: { name: 'c' }, webhooks: [good(), good()] },
    ]);
    assert.ok(findings.some((f) => f.rule === 'webhook-name-unique'));
  });

  it('checks a CRD webhook conversion', () => {
    const crd = (conversion: unknown) => ({
      kind: 'CustomResourceDefinition',
      metadata: { name: 'x.example.com' },
      spec: { conversion },
    });
    assert.deepEqual(lintDocuments([crd({ strategy: 'None' })]), []);
    const rules = (c: unknown) => lintDocuments([crd(c)]).map((f) => f.rule);
    assert.deepEqual(
      rules({
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1'], clientConfig: { url: 'https://h.example.com/c' } },
      }),
      [],
    );
    assert.deepEqual(rules({ strategy: 'Webhook', webhook: { conversionReviewVersions: ['v1'] } }), [
      'conversion-client-config',
    ]);
    assert.deepEqual(
      rules({
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v2'], clientConfig: { url: 'https://h.example.com/c?x' } },
      }),
      ['client-config-url', 'review-versions'],
    );
  });
});
