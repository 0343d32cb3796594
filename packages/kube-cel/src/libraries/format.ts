/**
 * Kubernetes' format CEL library (from 1.31): named formats whose `validate(s)` gives no value for a
 * valid string and otherwise the list of reasons apimachinery's validation gives, word for word;
 * and the name rules of the authorizer library's `serviceAccount(namespace, name)`. The checks are
 * hand-written scans, linear in the input, where Go runs RE2 patterns.
 */
import { requestUriProblem } from './url.ts';
import { utf8Length } from './go.ts';

const DNS1123_LABEL_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;
const DNS1035_LABEL_MAX = 63;
const QUALIFIED_NAME_MAX = 63;
const LABEL_VALUE_MAX = 63;

const DNS1123_LABEL_FMT = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_LABEL_MSG =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and " +
  'end with an alphanumeric character';
const DNS1123_SUBDOMAIN_FMT = `${DNS1123_LABEL_FMT}(\\.${DNS1123_LABEL_FMT})*`;
const DNS1123_SUBDOMAIN_MSG =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must " +
  'start and end with an alphanumeric character';
const DNS1035_LABEL_FMT = '[a-z]([-a-z0-9]*[a-z0-9])?';
const DNS1035_LABEL_MSG =
  "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic " +
  'character, and end with an alphanumeric character';
const QUALIFIED_NAME_FMT = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const QUALIFIED_NAME_MSG =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_FMT = `(${QUALIFIED_NAME_FMT})?`;
const LABEL_VALUE_MSG =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must " +
  'start and end with an alphanumeric character';

/** apimachinery's MaxLenError. */
const maxLen = (n: number): string => `must be no more than ${n} characters`;

/** apimachinery's RegexError (its examples joined by "', " and " or ", hence two spaces). */
function regexError(msg: string, fmt: string, ...examples: string[]): string {
  if (examples.length === 0) return `${msg} (regex used for validation is '${fmt}')`;
  return `${msg} (e.g. ${examples.map((e) => `'${e}', `).join(' or ')}regex used for validation is '${fmt}')`;
}

/** Go's len(s): UTF-8 bytes. */
const byteLength = utf8Length;

const isLowerAlnum = (c: number): boolean => (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39);
const isAlnum = (c: number): boolean => isLowerAlnum(c) || (c >= 0x41 && c <= 0x5a);

/** Matches `[a-z0-9]([-a-z0-9]*[a-z0-9])?` (or the DNS-1035 form, first character a letter) on s[from:to]. */
function matchLabel(s: string, from: number, to: number, letterFirst: boolean): boolean {
  if (to <= from) return false;
  const first = s.charCodeAt(from);
  if (letterFirst ? !(first >= 0x61 && first <= 0x7a) : !isLowerAlnum(first)) return false;
  if (!isLowerAlnum(s.charCodeAt(to - 1))) return false;
  for (let i = from + 1; i < to - 1; i++) {
    const c = s.charCodeAt(i);
    if (!isLowerAlnum(c) && c !== 0x2d) return false;
  }
  return true;
}

const isDns1123Label = (s: string): boolean => matchLabel(s, 0, s.length, false);
const isDns1035Label = (s: string): boolean => matchLabel(s, 0, s.length, true);

function isDns1123Subdomain(s: string): boolean {
  let from = 0;
  for (;;) {
    const dot = s.indexOf('.', from);
    const to = dot < 0 ? s.length : dot;
    if (!matchLabel(s, from, to, false)) return false;
    if (dot < 0) return true;
    from = dot + 1;
  }
}

/** Matches `([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]`. */
function isQualifiedNamePart(s: string): boolean {
  if (s.length === 0 || !isAlnum(s.charCodeAt(0)) || !isAlnum(s.charCodeAt(s.length - 1))) return false;
  for (let i = 1; i < s.length - 1; i++) {
    const c = s.charCodeAt(i);
    if (!isAlnum(c) && c !== 0x2d && c !== 0x5f && c !== 0x2e) return false;
  }
  return true;
}

/** apimachinery's IsDNS1123Label. */
export function dns1123LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_LABEL_MAX) errs.push(maxLen(DNS1123_LABEL_MAX));
  if (!isDns1123Label(value)) {
    // A valid subdomain that is no label can only have dots (the length was checked above).
    if (isDns1123Subdomain(value)) errs.push('must not contain dots');
    else errs.push(regexError(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, 'my-name', '123-abc'));
  }
  return errs;
}

/** apimachinery's IsDNS1123Subdomain. */
export function dns1123SubdomainErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1123_SUBDOMAIN_MAX) errs.push(maxLen(DNS1123_SUBDOMAIN_MAX));
  if (!isDns1123Subdomain(value)) errs.push(regexError(DNS1123_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, 'example.com'));
  return errs;
}

/** apimachinery's IsDNS1035Label. */
export function dns1035LabelErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > DNS1035_LABEL_MAX) errs.push(maxLen(DNS1035_LABEL_MAX));
  if (!isDns1035Label(value)) errs.push(regexError(DNS1035_LABEL_MSG, DNS1035_LABEL_FMT, 'my-name', 'abc-123'));
  return errs;
}

/** apimachinery's IsQualifiedName. */
export function qualifiedNameErrors(value: string): string[] {
  const errs: string[] = [];
  const parts = value.split('/');
  let name: string;
  if (parts.length === 1) {
    name = parts[0]!;
  } else if (parts.length === 2) {
    const prefix = parts[0]!;
    name = parts[1]!;
    if (prefix.length === 0) errs.push('prefix part must be non-empty');
    else errs.push(...dns1123SubdomainErrors(prefix).map((m) => `prefix part ${m}`));
  } else {
    return [
      `a qualified name ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}` +
        " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
    ];
  }
  if (name.length === 0) errs.push('name part must be non-empty');
  else if (byteLength(name) > QUALIFIED_NAME_MAX) errs.push(`name part ${maxLen(QUALIFIED_NAME_MAX)}`);
  if (!isQualifiedNamePart(name))
    errs.push(`name part ${regexError(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, 'MyName', 'my.name', '123-abc')}`);
  return errs;
}

/** apimachinery's IsValidLabelValue. */
export function labelValueErrors(value: string): string[] {
  const errs: string[] = [];
  if (byteLength(value) > LABEL_VALUE_MAX) errs.push(maxLen(LABEL_VALUE_MAX));
  if (value !== '' && !isQualifiedNamePart(value))
    errs.push(regexError(LABEL_VALUE_MSG, LABEL_VALUE_FMT, 'MyValue', 'my_value', '12345'));
  return errs;
}

/**
 * apimachinery's maskTrailingDash for prefix names (a name the server appends to): a trailing '-'
 * with the character before it becomes 'a', as Go's `name[:len(name)-2] + "a"` does.
 */
function maskTrailingDash(name: string): string {
  return name.length > 1 && name.endsWith('-') ? `${name.slice(0, -2)}a` : name;
}

const isHex = (c: number): boolean => (c >= 0x30 && c <= 0x39) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);

/** kube-openapi's uuid format: 32 hex digits, optionally grouped 8-4-4-4-12 by '-', any case. */
function isUuid(s: string): boolean {
  let i = 0;
  for (const [group, index] of [
    [8, 0],
    [4, 1],
    [4, 2],
    [4, 3],
    [12, 4],
  ] as const) {
    if (index > 0 && s[i] === '-') i++;
    for (let k = 0; k < group; k++, i++) if (!isHex(s.charCodeAt(i))) return false;
  }
  return i === s.length;
}

/** govalidator's IsBase64: whole groups of four of the standard alphabet, the last possibly padded. */
function isBase64(s: string): boolean {
  if (s.length === 0 || s.length % 4 !== 0) return false;
  const alphabet = (c: number) =>
    (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2b || c === 0x2f;
  let end = s.length;
  if (s.endsWith('==')) end -= 2;
  else if (s.endsWith('=')) end -= 1;
  for (let i = 0; i < end; i++) if (!alphabet(s.charCodeAt(i))) return false;
  return true;
}

/** Go's time.Parse("2006-01-02", s): four-digit year, two-digit month and day, the day within the month. */
function isFullDate(s: string): boolean {
  const m = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(s);
  if (!m) return false;
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
  return day <= days;
}

/**
 * kube-openapi's IsDateTime: lower-cased, split at every 't'; the first piece a full date, the
 * second `hh:mm:ss`, an optional fraction and `z` or an offset (later pieces are not looked at).
 */
function isDateTime(s: string): boolean {
  if (s.length < 4) return false;
  const pieces = s.toLowerCase().split('t');
  if (pieces.length < 2 || !isFullDate(pieces[0]!)) return false;
  const m = /^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$/.exec(pieces[1]!);
  return m !== null && m[1]! <= '23' && m[2]! <= '59' && m[3]! <= '59';
}

/** A named format: `format.<name>()` or `format.named(name)`. */
export interface NamedFormat {
  /** The name the library gives the format (its type's String()). */
  readonly name: string;
  /** `validate(s)`: undefined (optional.none) when s is valid, otherwise the reasons. */
  validate(s: string): string[] | undefined;
  /** The pattern length the API server charges validation as (the library's MaxRegexSize). */
  readonly maxRegexSize: number;
}

const named = (name: string, errors: (s: string) => string[], maxRegexSize: number): NamedFormat => ({
  name,
  maxRegexSize,
  validate: (s) => {
    const errs = errors(s);
    return errs.length === 0 ? undefined : errs;
  },
});
const single = (ok: (s: string) => boolean, message: string) => (s: string) => (ok(s) ? [] : [message]);

// The pattern lengths the API server charges the non-regex formats as: govalidator's URL pattern
// (uri), kube-openapi's UUID pattern, govalidator's Base64 pattern, and kube-openapi's date-time
// pattern (date and datetime both).
const URL_PATTERN_LENGTH = 1103;
const UUID_PATTERN_LENGTH = 89;
const BASE64_PATTERN_LENGTH = 84;
const DATE_TIME_PATTERN_LENGTH = 71;

/** The library's formats by the names `format.named()` accepts. */
export const FORMATS: Readonly<Record<string, NamedFormat>> = Object.freeze({
  dns1123Label: named('DNS1123Label', dns1123LabelErrors, 30),
  dns1123Subdomain: named('DNS1123Subdomain', dns1123SubdomainErrors, 60),
  dns1035Label: named('DNS1035Label', dns1035LabelErrors, 30),
  qualifiedName: named('QualifiedName', qualifiedNameErrors, 60),
  dns1123LabelPrefix: named('DNS1123LabelPrefix', (s) => dns1123LabelErrors(maskTrailingDash(s)), 30),
  dns1123SubdomainPrefix: named('DNS1123SubdomainPrefix', (s) => dns1123SubdomainErrors(maskTrailingDash(s)), 60),
  dns1035LabelPrefix: named('DNS1035LabelPrefix', (s) => dns1035LabelErrors(maskTrailingDash(s)), 30),
  labelValue: named('LabelValue', labelValueErrors, 40),
  uri: named(
    'URI',
    (s) => {
      const problem = requestUriProblem(s);
      return problem === undefined ? [] : [problem];
    },
    URL_PATTERN_LENGTH,
  ),
  uuid: named('uuid', single(isUuid, 'does not match the UUID format'), UUID_PATTERN_LENGTH),
  byte: named('byte', single(isBase64, 'invalid base64'), BASE64_PATTERN_LENGTH),
  date: named('date', single(isFullDate, 'invalid date'), DATE_TIME_PATTERN_LENGTH),
  datetime: named('datetime', single(isDateTime, 'invalid datetime'), DATE_TIME_PATTERN_LENGTH),
});

/** `format.named(name)`: the format, or undefined (optional.none) for an unknown name. */
export function formatNamed(name: string): NamedFormat | undefined {
  return Object.hasOwn(FORMATS, name) ? FORMATS[name] : undefined;
}

/** A user the authorizer library checks as, for `authorizer.serviceAccount(namespace, name)`. */
export interface ServiceAccountUser {
  readonly username: string;
  readonly uid: string;
  readonly groups: readonly string[];
}

/**
 * `authorizer.serviceAccount(namespace, name)`: the service account's user (its two service account
 * groups, no others), after the library's checks: the name a DNS-1123 subdomain, then the namespace
 * a DNS-1123 label, with its messages.
 */
export function serviceAccountUser(namespace: string, name: string): ServiceAccountUser {
  if (dns1123SubdomainErrors(name).length > 0) throw new Error('Invalid service account name');
  if (dns1123LabelErrors(namespace).length > 0) throw new Error('Invalid service account namespace');
  return {
    username: `system:serviceaccount:${namespace}:${name}`,
    uid: '',
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`],
  };
}

/** The Kubernetes minor version the format functions arrive in. */
export const FORMAT_FUNCTIONS_SINCE: Readonly<Record<string, number>> = {
  'format.named': 31,
  validate: 31,
  ...Object.fromEntries(Object.keys(FORMATS).map((name) => [`format.${name}`, 31])),
};
