import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FORMATS, formatNamed, serviceAccountUser } from './format.ts';

const v = (name: string, s: string) => formatNamed(name)!.validate(s);
const LABEL_RULE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and " +
  'end with an alphanumeric character ' +
  "(e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN_RULE =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must " +
  'start and end with an alphanumeric character ' +
  "(e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const NAME_PART_RULE =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
  'alphanumeric character ' +
  "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

describe('format library', () => {
  it('names the formats the library has', () => {
    assert.deepEqual(Object.keys(FORMATS).sort(), [
      'byte',
      'date',
      'datetime',
      'dns1035Label',
      'dns1035LabelPrefix',
      'dns1123Label',
      'dns1123LabelPrefix',
      'dns1123Subdomain',
      'dns1123SubdomainPrefix',
      'labelValue',
      'qualifiedName',
      'uri',
      'uuid',
    ]);
    assert.equal(formatNamed('dns1123Label')!.name, 'DNS1123Label');
    assert.equal(formatNamed('nope'), undefined);
    assert.equal(formatNamed('toString'), undefined);
  });

  it('validates DNS names with apimachinery messages', () => {
    assert.equal(v('dns1123Label', 'my-label-name'), undefined);
    assert.deepEqual(v('dns1123Label', 'contains a space'), [LABEL_RULE]);
    assert.deepEqual(v('dns1123Label', 'a.b'), ['must not contain dots']);
    assert.deepEqual(v('dns1123Label', 'a'.repeat(64)), ['must be no more than 63 characters']);
    assert.deepEqual(v('dns1123Label', `${'a'.repeat(64)}-`), ['must be no more than 63 characters', LABEL_RULE]);
    assert.deepEqual(v('dns1123Label', ''), [LABEL_RULE]);
    assert.equal(v('dns1123Subdomain', 'apiextensions.k8s.io'), undefined);
    assert.deepEqual(v('dns1123Subdomain', 'Uppercase'), [SUBDOMAIN_RULE]);
    assert.deepEqual(v('dns1123Subdomain', 'a..b'), [SUBDOMAIN_RULE]);
    assert.deepEqual(v('dns1123Subdomain', `${'a.'.repeat(127)}a`), ['must be no more than 253 characters']);
    assert.equal(v('dns1035Label', 'my-label-name'), undefined);
    assert.deepEqual(v('dns1035Label', '1abc'), [
      "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic " +
        'character, and end with an alphanumeric character ' +
        "(e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
    ]);
  });

  it('lets prefix formats end in a dash (masked as Go masks it)', () => {
    assert.equal(v('dns1123LabelPrefix', 'my-label-prefix-'), undefined);
    assert.deepEqual(v('dns1123Label', 'my-label-prefix-'), [LABEL_RULE]);
    assert.equal(v('dns1123SubdomainPrefix', 'mysubdomain.prefix.-'), undefined);
    assert.equal(v('dns1035LabelPrefix', 'my-label-prefix-'), undefined);
    // The dash and the character before it become one 'a': '-.-' masks to '-a', still no label.
    assert.deepEqual(v('dns1123LabelPrefix', '-.-'), [LABEL_RULE]);
    assert.equal(v('dns1123LabelPrefix', 'a-'), undefined);
    // 63 characters and a dash mask to 63 characters: within the label limit.
    assert.equal(v('dns1123LabelPrefix', `${'a'.repeat(63)}-`), undefined);
    assert.deepEqual(v('dns1123LabelPrefix', `${'a'.repeat(64)}-`), ['must be no more than 63 characters']);
  });

  it('validates qualified names and label values', () => {
    assert.equal(v('qualifiedName', 'apiextensions.k8s.io/v1beta1'), undefined);
    assert.equal(v('qualifiedName', 'MyName'), undefined);
    assert.deepEqual(v('qualifiedName', '/x'), ['prefix part must be non-empty']);
    assert.deepEqual(v('qualifiedName', 'x/'), ['name part must be non-empty', NAME_PART_RULE]);
    assert.deepEqual(v('qualifiedName', 'Bad_/x'), [`prefix part ${SUBDOMAIN_RULE}`]);
    assert.deepEqual(v('qualifiedName', 'a/b/c'), [
      "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with " +
        'an alphanumeric character ' +
        "(e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
        "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') " +
        "with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ]);
    assert.deepEqual(v('qualifiedName', 'x'.repeat(64)), ['name part must be no more than 63 characters']);
    assert.equal(v('labelValue', ''), undefined);
    assert.equal(v('labelValue', 'my_value'), undefined);
    assert.deepEqual(v('labelValue', '-bad'), [
      "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must " +
        'start and end with an alphanumeric character ' +
        "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is " +
        "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
    ]);
  });

  it('validates uri, uuid, byte, date and datetime', () => {
    assert.equal(v('uri', 'http://example.com'), undefined);
    assert.deepEqual(v('uri', '../x'), ['parse "../x": invalid URI for request']);
    assert.equal(v('uuid', '123e4567-e89b-12d3-a456-426614174000'), undefined);
    assert.equal(v('uuid', '123E4567E89B12D3A456426614174000'), undefined);
    assert.deepEqual(v('uuid', '123e4567-e89b-12d3-a456-42661417400'), ['does not match the UUID format']);
    assert.equal(v('byte', 'aGVsbG8='), undefined);
    assert.deepEqual(v('byte', 'aGVsbG8'), ['invalid base64']);
    assert.deepEqual(v('byte', ''), ['invalid base64']);
    assert.deepEqual(v('byte', 'a==='), ['invalid base64']);
    assert.equal(v('date', '2021-01-01'), undefined);
    assert.equal(v('date', '2020-02-29'), undefined);
    assert.deepEqual(v('date', '2021-02-29'), ['invalid date']);
    assert.deepEqual(v('date', '2021-1-01'), ['invalid date']);
    assert.equal(v('datetime', '2021-01-01T00:00:00Z'), undefined);
    assert.equal(v('datetime', '2021-01-01t23:59:59.123+01:00'), undefined);
    assert.deepEqual(v('datetime', '2021-01-01T24:00:00Z'), ['invalid datetime']);
    assert.deepEqual(v('datetime', '2021-01-01 00:00:00Z'), ['invalid datetime']);
  });

  it('checks lengths and patterns of 1 MB strings in one pass', () => {
    const big = `${'a'.repeat(1_000_000)}!`;
    for (const name of Object.keys(FORMATS)) assert.ok(formatNamed(name)!.validate(big), name);
    assert.equal(v('labelValue', 'a'.repeat(1_000_000))!.length, 1);
    assert.equal(v('byte', 'A'.repeat(1_000_000)), undefined);
  });
});

describe('authorizer serviceAccount names', () => {
  it('checks the name, then the namespace, with the library messages', () => {
    assert.deepEqual(serviceAccountUser('default', 'builder'), {
      username: 'system:serviceaccount:default:builder',
      uid: '',
      groups: ['system:serviceaccounts', 'system:serviceaccounts:default'],
    });
    assert.equal(serviceAccountUser('ns', 'a.b').username, 'system:serviceaccount:ns:a.b');
    assert.throws(() => serviceAccountUser('default', 'Bad'), /^Error: Invalid service account name$/);
    assert.throws(() => serviceAccountUser('Bad', 'Bad'), /^Error: Invalid service account name$/);
    assert.throws(() => serviceAccountUser('a.b', 'ok'), /^Error: Invalid service account namespace$/);
    assert.throws(() => serviceAccountUser('', 'ok'), /^Error: Invalid service account namespace$/);
    assert.throws(() => serviceAccountUser('ns', ''), /^Error: Invalid service account name$/);
  });
});
