// Field and label selectors parsed as apimachinery parses them for the authorizer library
// (fields.ParseSelector, labels.ParseToRequirements): each row a selector and the requirements
// the API server hands its authorizer, or the parser's error, word for word.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  goStringCompare,
  parseFieldSelector,
  parseLabelSelector,
  type FieldSelectorRequirement,
  type LabelSelectorOperator,
  type LabelSelectorRequirement,
} from './selectors.ts';
import { goSort } from './gosort.ts';

const f = (field: string, operator: '=' | '!=', value: string): FieldSelectorRequirement => ({
  field,
  operator,
  value,
});
const l = (key: string, operator: LabelSelectorOperator, ...values: string[]): LabelSelectorRequirement => ({
  key,
  operator,
  values,
});

/** A row's answer: the requirements, or an Error with the message the parser gives. */
type Row<R> = [string, R[] | Error];

function table<R>(parse: (s: string) => { requirements: R[] } | { error: string }, rows: Array<Row<R>>): void {
  const wrong: string[] = [];
  for (const [selector, expected] of rows) {
    const got = parse(selector);
    const want = expected instanceof Error ? { error: expected.message } : { requirements: expected };
    try {
      assert.deepEqual(got, want);
    } catch {
      wrong.push(`${JSON.stringify(selector)}: got ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
    }
  }
  assert.deepEqual(wrong, []);
}

const LABEL_VALUE_RULE =
  "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start " +
  "and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for " +
  "validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
const NAME_RULE =
  "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric " +
  "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is " +
  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const GT_LT = "for 'Gt', 'Lt' operators, the value must be an integer";
const requirementError = (detail: string) => new Error(`unable to parse requirement: ${detail}`);

describe('field selectors (fields.ParseSelector)', () => {
  it('terms, operators and order', () => {
    table(parseFieldSelector, [
      ['spec.nodeName=node-a', [f('spec.nodeName', '=', 'node-a')]],
      ['spec.nodeName==node-a', [f('spec.nodeName', '=', 'node-a')]],
      ['status.phase!=Running', [f('status.phase', '!=', 'Running')]],
      // Terms come sorted (byte order), whatever order they were written in.
      ['z=1,a=2,m!=3', [f('a', '=', '2'), f('m', '!=', '3'), f('z', '=', '1')]],
      ['b=1,B=2,a=3', [f('B', '=', '2'), f('a', '=', '3'), f('b', '=', '1')]],
      // Empty terms are skipped; a selector of none is no requirements and no error.
      [',a=1,,', [f('a', '=', '1')]],
      [',', []],
      // The first operator splits the term; nothing is trimmed; either side may be empty.
      ['a = b', [f('a ', '=', ' b')]],
      ['=x', [f('', '=', 'x')]],
      ['a=', [f('a', '=', '')]],
      ['a!b=c', [f('a!b', '=', 'c')]],
      ['a=!b', [f('a', '=', '!b')]],
      ['a!==b', new Error('invalid field selector: unescaped character in value: 61')],
      ['a===b', new Error('invalid field selector: unescaped character in value: 61')],
      // Sorting puts a term of the same field with a longer value after the shorter.
      ['a=1,a=10,a=0', [f('a', '=', '0'), f('a', '=', '1'), f('a', '=', '10')]],
      // Code points above U+FFFF sort after U+E000–U+FFFF, as their UTF-8 does.
      ['x=\u{1F600},x=\uFFFD', [f('x', '=', '\uFFFD'), f('x', '=', '\u{1F600}')]],
    ]);
  });

  it('escapes in values: \\\\, \\, and \\= unescaped; the field kept as written', () => {
    table(parseFieldSelector, [
      ['a=x\\,y', [f('a', '=', 'x,y')]],
      ['a=x\\=y', [f('a', '=', 'x=y')]],
      ['a=x\\\\y', [f('a', '=', 'x\\y')]],
      ['a=x\\\\,b=y', [f('a', '=', 'x\\'), f('b', '=', 'y')]],
      ['a\\,b=c', [f('a\\,b', '=', 'c')]],
      ['a=\\\\\\,\\=', [f('a', '=', '\\,=')]],
    ]);
  });

  it('errors, from the first bad term in sorted order', () => {
    table(parseFieldSelector, [
      ['ab', new Error("invalid selector: 'ab'; can't understand 'ab'")],
      ['a=1,b', new Error("invalid selector: 'a=1,b'; can't understand 'b'")],
      ['a=1,x!y', new Error("invalid selector: 'a=1,x!y'; can't understand 'x!y'")],
      ['a=b=c', new Error('invalid field selector: unescaped character in value: 61')],
      ['a=x\\n', new Error('invalid field selector: invalid escape sequence: \\n')],
      ['a=x\\\u{1F600}', new Error('invalid field selector: invalid escape sequence: \\\u{1F600}')],
      ['a=x\\', new Error('invalid field selector: invalid escape sequence: \\')],
      // Sorted first, so the unescaped '=' of "a=…" is met before "z" cannot be understood.
      ['z,a=b=c', new Error('invalid field selector: unescaped character in value: 61')],
      ['b=b=b,a', new Error("invalid selector: 'b=b=b,a'; can't understand 'a'")],
    ]);
  });
});

describe('label selectors (labels.ParseToRequirements)', () => {
  it('operators, with their values sorted and unique', () => {
    table(parseLabelSelector, [
      ['app=web', [l('app', '=', 'web')]],
      ['app==web', [l('app', '==', 'web')]],
      ['app!=web', [l('app', '!=', 'web')]],
      ['app', [l('app', 'exists')]],
      ['!app', [l('app', '!')]],
      ['tier in (web,db,web)', [l('tier', 'in', 'db', 'web')]],
      ['tier notin ( web , db )', [l('tier', 'notin', 'db', 'web')]],
      ['replicas>3', [l('replicas', 'gt', '3')]],
      ['replicas<3', [l('replicas', 'lt', '3')]],
      ['replicas<9223372036854775807', [l('replicas', 'lt', '9223372036854775807')]],
      ['example.com/app=web', [l('example.com/app', '=', 'web')]],
      // Empty values: after an operator, in a set, and a set of none.
      ['app=', [l('app', '=', '')]],
      ['app=,b', [l('app', '=', ''), l('b', 'exists')]],
      ['app in ()', [l('app', 'in', '')]],
      ['app in (,)', [l('app', 'in', '')]],
      ['app in (x,,y)', [l('app', 'in', '', 'x', 'y')]],
      ['app in (x,)', [l('app', 'in', '', 'x')]],
      // `in` and `notin` read as names where a name or value goes.
      ['in in (notin)', [l('in', 'in', 'notin')]],
      ['notin=in', [l('notin', '=', 'in')]],
    ]);
  });

  it('blanks, order and the end of the selector', () => {
    table(parseLabelSelector, [
      ['', []],
      [' \t\r\n', []],
      ['  b = 1 ,\ta  ', [l('a', 'exists'), l('b', '=', '1')]],
      // Sorted by key (byte order); equal keys keep their written order.
      ['z,b!=2,a,b=1', [l('a', 'exists'), l('b', '!=', '2'), l('b', '=', '1'), l('z', 'exists')]],
      // Past 12 requirements Go's sort (not stable) may reorder those of one key.
      [
        'a=v0,b=v1,c=v2,c=v3,b=v4,c=v5,c=v6,a=v7,c=v8,a=v9,a=v10,c=v11,a=v12,b=v13',
        [
          ...['v9', 'v0', 'v12', 'v10', 'v7'].map((v) => l('a', '=', v)),
          ...['v1', 'v13', 'v4'].map((v) => l('b', '=', v)),
          ...['v3', 'v8', 'v6', 'v11', 'v5', 'v2'].map((v) => l('c', '=', v)),
        ],
      ],
      ['b,B,_x', new Error(`unable to parse requirement: <nil>: Invalid value: "_x": name part ${NAME_RULE}`)],
      // Go reads a NUL byte as the end of a token or of the selector.
      ['a=b\0c', new Error("found 'c', expected: ',' or 'end of string'")],
      // …and where a token is to start: after a blank; after an operator it goes with the operator.
      ['a, \0b', new Error("found '', expected: identifier after ','")],
      ['a,\0b', [l('a', 'exists'), l('b', 'exists')]],
      ['a\0', [l('a', 'exists')]],
    ]);
  });

  it('syntax errors, with the token found', () => {
    table(parseLabelSelector, [
      ['a,', new Error("found '', expected: identifier after ','")],
      ['a,,b', new Error("found ',', expected: identifier after ','")],
      [',a', new Error("found ',', expected: !, identifier, or 'end of string'")],
      ['=a', new Error("found '=', expected: !, identifier, or 'end of string'")],
      ['a b', requirementError("found 'b', expected: '=', '!=', '==', 'in', notin'")],
      ['a=b c', new Error("found 'c', expected: ',' or 'end of string'")],
      ['!a=b', new Error("found '=', expected: ',' or 'end of string'")],
      ['!', requirementError("found '', expected: identifier")],
      ['!!a', requirementError("found '!', expected: identifier")],
      ['a=(', requirementError("found '(', expected: identifier")],
      ['a in x', requirementError("found 'x' expected: '('")],
      ['a in (x y)', requirementError("found 'y', expected: ',' or ')'")],
      ['a in (x', requirementError("found '', expected: ',' or ')'")],
      ['a in (=)', requirementError("found '=', expected: ',', ')' or identifier")],
      ['a in (x,=)', requirementError("found '=', expected: ',', or identifier")],
      // Two commas read the empty value between them and the one after: a ')' there is unexpected.
      ['a in (,x,,)', requirementError("found ')', expected: ',', or identifier")],
      // `>=` is read as `>` then `=`.
      ['a>=1', requirementError("found '=', expected: identifier")],
      ['a==!b', requirementError("found '!', expected: identifier")],
    ]);
  });

  it('keys and values validated as label keys and values', () => {
    const long = 'v'.repeat(64);
    table(parseLabelSelector, [
      ['-a=b', requirementError(`<nil>: Invalid value: "-a": name part ${NAME_RULE}`)],
      [
        'a/b/c',
        requirementError(
          `<nil>: Invalid value: "a/b/c": a qualified name ${NAME_RULE} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
        ),
      ],
      ['/a', requirementError('<nil>: Invalid value: "/a": prefix part must be non-empty')],
      ['k\u00e9y', requirementError(`<nil>: Invalid value: "k\u00e9y": name part ${NAME_RULE}`)],
      ['a=-b', requirementError(`values[0][a]: Invalid value: "-b": ${LABEL_VALUE_RULE}`)],
      [`a=${long}`, requirementError(`values[0][a]: Invalid value: "${long}": must be no more than 63 characters`)],
      [`a=${long.slice(1)}`, [l('a', '=', long.slice(1))]],
      // Every bad value is reported, in sorted order, as a list.
      [
        'a in (ok,-y,-x)',
        requirementError(
          `[values[0][a]: Invalid value: "-x": ${LABEL_VALUE_RULE}, values[1][a]: Invalid value: "-y": ${LABEL_VALUE_RULE}]`,
        ),
      ],
      ['a>x', requirementError(`values[0]: Invalid value: "x": ${GT_LT}`)],
      ['a>', requirementError(`values[0]: Invalid value: "": ${GT_LT}`)],
      ['a<1_000', requirementError(`values[0]: Invalid value: "1_000": ${GT_LT}`)],
      ['a>9223372036854775808', requirementError(`values[0]: Invalid value: "9223372036854775808": ${GT_LT}`)],
      // `+3` and `-1` parse as integers but are no label values.
      ['a<+3', requirementError(`values[0][a]: Invalid value: "+3": ${LABEL_VALUE_RULE}`)],
      ['a>-1', requirementError(`values[0][a]: Invalid value: "-1": ${LABEL_VALUE_RULE}`)],
      [
        `a<-${'9'.repeat(70)}`,
        requirementError(
          `[values[0]: Invalid value: "-${'9'.repeat(70)}": ${GT_LT}, values[0][a]: Invalid value: "-${'9'.repeat(70)}": must be no more than 63 characters; ${LABEL_VALUE_RULE}]`,
        ),
      ],
      [
        'a<-9223372036854775808',
        requirementError(`values[0][a]: Invalid value: "-9223372036854775808": ${LABEL_VALUE_RULE}`),
      ],
      ['a<00000000000000000000000001', [l('a', 'lt', '00000000000000000000000001')]],
    ]);
  });
});

describe('hostile selectors', () => {
  const MB = 1 << 20;

  it('parses 1 MB selectors in one pass', () => {
    const fields = parseFieldSelector('a=b,'.repeat(MB / 4));
    assert.ok('requirements' in fields && fields.requirements.length === MB / 4);
    const labels = parseLabelSelector(`a in (${'x,'.repeat(MB / 2)}y)`);
    assert.deepEqual(labels, { requirements: [l('a', 'in', 'x', 'y')] });
    const many = parseLabelSelector(Array.from({ length: MB / 8 }, (_, i) => `k${i}`).join(','));
    assert.ok('requirements' in many && many.requirements.length === MB / 8);
    assert.equal(many.requirements[1]!.key, 'k1');
    const special = parseLabelSelector('=!('.repeat(MB / 3));
    assert.deepEqual(special, { error: "found '=', expected: !, identifier, or 'end of string'" });
    const key = parseLabelSelector('k'.repeat(MB));
    assert.ok('error' in key && key.error.includes('name part must be no more than 63 characters'));
    const escapes = parseFieldSelector(`a=${'\\\\'.repeat(MB / 2)}`);
    assert.deepEqual(escapes, { requirements: [f('a', '=', '\\'.repeat(MB / 2))] });
  });

  it('orders strings by their UTF-8 bytes', () => {
    const words = ['\u{1F600}', '\uFFFF', 'z', 'Z', '', 'za', '\u00e9'];
    assert.deepEqual([...words].sort(goStringCompare), ['', 'Z', 'z', 'za', '\u00e9', '\uFFFF', '\u{1F600}']);
  });
});

describe("Go's sort.Sort, which is not stable", () => {
  // Answers of Go 1.19's sort.Sort (its generator's shifts 13, 17, 5) for keys at their indexes:
  // the ids in the order it leaves them.
  const rows: Array<[string, number[], number[]]> = [
    [
      '60 keys of 5 values',
      Array.from({ length: 60 }, (_, i) => (i * 7) % 5),
      [
        40, 30, 55, 10, 20, 5, 50, 0, 35, 45, 15, 25, 38, 13, 58, 23, 8, 33, 18, 48, 53, 43, 28, 3, 31, 36, 26, 1, 56,
        51, 21, 6, 46, 11, 41, 16, 49, 24, 14, 39, 59, 34, 54, 4, 44, 9, 29, 19, 47, 7, 37, 32, 52, 17, 42, 2, 22, 57,
        27, 12,
      ],
    ],
    [
      '100 keys descending in threes',
      Array.from({ length: 100 }, (_, i) => Math.trunc((100 - i) / 3)),
      [
        99, 98, 97, 96, 95, 92, 94, 93, 90, 91, 89, 88, 87, 86, 85, 84, 83, 80, 82, 81, 78, 79, 77, 76, 75, 74, 73, 72,
        71, 68, 70, 69, 67, 66, 65, 62, 64, 63, 61, 60, 59, 58, 57, 56, 53, 55, 54, 51, 50, 52, 49, 48, 47, 44, 46, 45,
        42, 43, 41, 38, 40, 39, 37, 36, 35, 34, 33, 32, 29, 31, 30, 26, 27, 28, 25, 24, 23, 22, 21, 20, 17, 19, 18, 14,
        15, 16, 11, 13, 12, 8, 10, 9, 7, 6, 5, 4, 3, 2, 0, 1,
      ],
    ],
    [
      '14 keys of 3 values',
      [...'cabacbacbabcab'].map((c) => c.charCodeAt(0)),
      [6, 3, 1, 12, 9, 8, 2, 13, 5, 10, 4, 11, 0, 7],
    ],
  ];
  for (const [name, keys, ids] of rows)
    it(name, () => {
      const items = keys.map((k, id) => ({ k, id }));
      const sorted = goSort(items, (a, b) => a.k < b.k, [13n, 17n, 5n]);
      assert.deepEqual(
        sorted.map((x) => x.id),
        ids,
      );
    });

  it('sorts what has 12 elements or fewer by insertion: stable', () => {
    const items = [...'bababababab'].map((k, id) => ({ k, id }));
    assert.deepEqual(
      goSort(items, (a, b) => a.k < b.k).map((x) => x.id),
      [1, 3, 5, 7, 9, 0, 2, 4, 6, 8, 10],
    );
  });
});
