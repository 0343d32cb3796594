// Kubernetes' own cases for its format (1.31+) and semver (1.33+) CEL libraries, restated: the
// expression and the API server's answer, reasons and error messages word for word.
import { describe, it } from 'node:test';
import { FORMATS } from './format.ts';
import { checkAll, compile, error, none, some, value, type Case } from '../../test/k8s-cases.ts';

const rows = (list: Array<[string, ReturnType<typeof value>]>): Case[] =>
  list.map(([expr, expect]) => ({ expr, expect }));

const LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end " +
  "with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start " +
  "and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
  "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const DNS1035 =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic " +
  "character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for " +
  "validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED =
  "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an " +
  "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start " +
  "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for " +
  "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

describe('format library (Kubernetes 1.31+)', () => {
  it('accepts valid values: validate gives no value', () => {
    checkAll(
      rows([
        ['format.dns1123Label().validate("my-label-name")', none],
        ['format.dns1123Subdomain().validate("apiextensions.k8s.io")', none],
        ['format.qualifiedName().validate("apiextensions.k8s.io/v1beta1")', none],
        ['format.dns1123LabelPrefix().validate("my-label-prefix-")', none],
        ['format.dns1123SubdomainPrefix().validate("mysubdomain.prefix.-")', none],
        ['format.dns1035LabelPrefix().validate("my-label-prefix-")', none],
        ['format.uri().validate("http://example.com")', none],
        ['format.uuid().validate("123e4567-e89b-12d3-a456-426614174000")', none],
        ['format.byte().validate("aGVsbG8=")', none],
        ['format.date().validate("2021-01-01")', none],
        ['format.datetime().validate("2021-01-01T00:00:00Z")', none],
        ['format.dns1123Subdomain().validate("example.com")', none],
        ['format.dns1035Label().validate("my-label-name")', none],
        ['format.qualifiedName().validate("my.name")', none],
        ['format.date().validate("2020-01-01")', none],
        ['format.datetime().validate("2020-01-01T00:00:00Z")', none],
        ['format.labelValue().validate("my-cool-label-Value")', none],
      ]),
    );
  });

  it("refuses invalid values with apimachinery's reasons", () => {
    checkAll(
      rows([
        ['format.dns1123Label().validate("contains a space")', some([LABEL])],
        ['format.dns1123Subdomain().validate("contains a space")', some([SUBDOMAIN])],
        ['format.dns1035Label().validate("contains a space")', some([DNS1035])],
        ['format.qualifiedName().validate("contains a space")', some([QUALIFIED])],
        ['format.dns1123LabelPrefix().validate("contains a space-")', some([LABEL])],
        ['format.dns1123SubdomainPrefix().validate("contains a space-")', some([SUBDOMAIN])],
        ['format.dns1035LabelPrefix().validate("contains a space-")', some([DNS1035])],
        ['format.byte().validate("aGVsbG8")', some(['invalid base64'])],
        ['format.date().validate("2020-01-32")', some(['invalid date'])],
        ['format.datetime().validate("2020-01-32T00:00:00Z")', some(['invalid datetime'])],
        ['format.labelValue().validate("my-cool-label-Value!!\\n\\n!!!")', some([LABEL_VALUE])],
        ['format.named("unknown").hasValue()', value(false)],
      ]),
    );
  });

  it('looks every format up by name, and each equals itself only', () => {
    const names = Object.keys(FORMATS);
    const cases: Case[] = [];
    for (const a of names) {
      cases.push({ expr: `format.named("${a}").hasValue()`, expect: value(true) });
      cases.push({ expr: `format.named("${a}").value() == format.${a}()`, expect: value(true) });
      for (const b of names) {
        if (a !== b) cases.push({ expr: `format.${a}() == format.${b}()`, expect: value(false) });
      }
    }
    checkAll(cases);
  });

  it('is not declared before 1.31', () => {
    checkAll([{ expr: 'format.dns1123Label().validate("a").hasValue()', minor: 30, expect: compile(/format/) }]);
  });
});

describe('semver library (Kubernetes 1.33+)', () => {
  it('parses strict semantic versions only', () => {
    checkAll(
      rows([
        ['semver("1.2.3") == semver("1.2.3")', value(true)],
        ['semver("v1.0")', error(/No Major\.Minor\.Patch elements found/)],
        ['isSemver("1.2.3-beta.1+build.1")', value(true)],
        ['isSemver("")', value(false)],
        ['isSemver("v1.0.0")', value(false)],
        ['isSemver(" 1.0.0")', value(false)],
        ['isSemver("1. 0.0")', value(false)],
        ['isSemver("1.0.0 ")', value(false)],
        ['isSemver("01.01.01")', value(false)],
        ['isSemver("1")', value(false)],
        ['isSemver("1.1")', value(false)],
        ['isSemver([1, 2, 3])', compile(/isSemver/)],
      ]),
    );
  });

  it('normalizes when asked: a v prefix, leading zeros, missing parts', () => {
    checkAll(
      rows([
        ['isSemver("", true)', value(false)],
        ['isSemver(" 1.0.0", true)', value(false)],
        ['isSemver("1. 0.0", true)', value(false)],
        ['isSemver("1.0.0 ", true)', value(false)],
        ['isSemver("v1.0.0", true)', value(true)],
        ['isSemver("01.01.01", true)', value(true)],
        ['isSemver("1", true)', value(true)],
        ['isSemver("1.1", true)', value(true)],
        ['semver("v01.01", true) == semver("1.1.0")', value(true)],
      ]),
    );
  });

  it('compares and reads versions', () => {
    checkAll(
      rows([
        ['semver("1.2.3") == semver("1.0.0")', value(false)],
        ['semver("1.0.0").isLessThan(semver("1.2.3"))', value(true)],
        ['semver("1.0.0").isLessThan(semver("1.0.0"))', value(false)],
        ['semver("1.2.3").isGreaterThan(semver("1.0.0"))', value(true)],
        ['semver("1.0.0").isGreaterThan(semver("1.0.0"))', value(false)],
        ['semver("1.2.3").compareTo(semver("1.2.3"))', value(0n)],
        ['semver("1.0.0").compareTo(semver("1.2.3"))', value(-1n)],
        ['semver("1.2.3").compareTo(semver("1.0.0"))', value(1n)],
        ['semver("1.2.3").major()', value(1n)],
        ['semver("1.2.3").minor()', value(2n)],
        ['semver("1.2.3").patch()', value(3n)],
      ]),
    );
  });

  it('is not declared before 1.33', () => {
    checkAll([{ expr: 'isSemver("1.0.0")', minor: 32, expect: compile(/isSemver/) }]);
  });
});
