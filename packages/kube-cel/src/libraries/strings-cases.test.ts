// cel-go's extended strings library as Kubernetes enables it (version 2 from 1.29), restated from
// cel-go's own cases: indexes count code points, and the errors are cel-go's words.
import { describe, it } from 'node:test';
import { checkAll, compile, error, value, type Case } from '../../test/k8s-cases.ts';

/** Expressions that must evaluate to true. */
const truths = (list: string[]): Case[] => list.map((expr) => ({ expr, expect: value(true) }));

describe('strings library, by code point', () => {
  it('charAt, indexOf and lastIndexOf', () => {
    checkAll(
      truths([
        "'tacocat'.charAt(3) == 'o'",
        "'tacocat'.charAt(7) == ''",
        "'©αT'.charAt(0) == '©' && '©αT'.charAt(1) == 'α' && '©αT'.charAt(2) == 'T'",
        "'tacocat'.indexOf('') == 0",
        "'tacocat'.indexOf('ac') == 1",
        "'tacocat'.indexOf('none') == -1",
        "'tacocat'.indexOf('', 3) == 3",
        "'tacocat'.indexOf('a', 3) == 5",
        "'tacocat'.indexOf('at', 3) == 5",
        "'ta©o©αT'.indexOf('©') == 2",
        "'ta©o©αT'.indexOf('©', 3) == 4",
        "'ta©o©αT'.indexOf('©αT', 3) == 4",
        "'ta©o©αT'.indexOf('©α', 5) == -1",
        "'ijk'.indexOf('k') == 2",
        "'hello wello'.indexOf('hello wello') == 0",
        "'hello wello'.indexOf('ello', 6) == 7",
        "'hello wello'.indexOf('elbo room!!') == -1",
        "'hello wello'.indexOf('elbo room!!!') == -1",
        "'tacocat'.lastIndexOf('') == 7",
        "'tacocat'.lastIndexOf('at') == 5",
        "'tacocat'.lastIndexOf('none') == -1",
        "'tacocat'.lastIndexOf('', 3) == 3",
        "'tacocat'.lastIndexOf('a', 3) == 1",
        "'ta©o©αT'.lastIndexOf('©') == 4",
        "'ta©o©αT'.lastIndexOf('©', 3) == 2",
        "'ta©o©αT'.lastIndexOf('©α', 4) == 4",
        "'hello wello'.lastIndexOf('ello', 6) == 1",
        "'hello wello'.lastIndexOf('low') == -1",
        "'hello wello'.lastIndexOf('elbo room!!') == -1",
        "'hello wello'.lastIndexOf('elbo room!!!') == -1",
        "'hello wello'.lastIndexOf('hello wello') == 0",
        "'bananananana'.lastIndexOf('nana', 7) == 6",
        "'bananananana'.lastIndexOf('nana', 8) == 8",
      ]),
    );
  });

  it('lowerAscii and upperAscii change ASCII letters only', () => {
    checkAll(
      truths([
        "'TacoCat'.lowerAscii() == 'tacocat'",
        "'TacoCÆt'.lowerAscii() == 'tacocÆt'",
        "'TacoCÆt Xii'.lowerAscii() == 'tacocÆt xii'",
        "'tacoCat'.upperAscii() == 'TACOCAT'",
        "'tacoCαt'.upperAscii() == 'TACOCαT'",
      ]),
    );
  });

  it('replace, split, substring and join', () => {
    checkAll(
      truths([
        '"12 days 12 hours".replace("{0}", "2") == "12 days 12 hours"',
        '"{0} days {0} hours".replace("{0}", "2") == "2 days 2 hours"',
        '"{0} days {0} hours".replace("{0}", "2", 1).replace("{0}", "23") == "2 days 23 hours"',
        '"1 ©αT taco".replace("αT", "o©α") == "1 ©o©α taco"',
        '"hello hello".replace("", "_") == "_h_e_l_l_o_ _h_e_l_l_o_"',
        '"hello hello".replace("h", "") == "ello ello"',
        '"hello world".split(" ") == ["hello", "world"]',
        '"hello world events!".split(" ", 0) == []',
        '"hello world events!".split(" ", 1) == ["hello world events!"]',
        '"o©o©o©o".split("©", -1) == ["o", "o", "o", "o"]',
        '"tacocat".substring(4) == "cat"',
        '"tacocat".substring(7) == ""',
        '"tacocat".substring(0, 4) == "taco"',
        '"tacocat".substring(4, 4) == ""',
        '\'ta©o©αT\'.substring(2, 6) == "©o©α"',
        '\'ta©o©αT\'.substring(7, 7) == ""',
        "['x', 'y'].join() == 'xy'",
        "['x', 'y'].join('-') == 'x-y'",
        "[].join() == ''",
        "[].join('-') == ''",
      ]),
    );
  });

  it('trim removes Unicode white space, not the look-alikes', () => {
    checkAll(
      truths([
        '" \\f\\n\\r\\t\\vtext  ".trim() == "text"',
        '"\\u0085\\u00a0\\u1680text".trim() == "text"',
        '"text\\u2000\\u2001\\u2002\\u2003\\u2004\\u2004\\u2006\\u2007\\u2008\\u2009".trim() == "text"',
        '"\\u200atext\\u2028\\u2029\\u202F\\u205F\\u3000".trim() == "text"',
        '"\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff".trim() == "\\u180etext\\u200b\\u200c\\u200d\\u2060\\ufeff"',
      ]),
    );
  });

  it('strings.quote escapes as CEL literals do', () => {
    checkAll(
      truths([
        'strings.quote("first\\nsecond") == "\\"first\\\\nsecond\\""',
        'strings.quote("bell\\a") == "\\"bell\\\\a\\""',
        'strings.quote("\\bbackspace") == "\\"\\\\bbackspace\\""',
        'strings.quote("\\fform feed") == "\\"\\\\fform feed\\""',
        'strings.quote("carriage \\r return") == "\\"carriage \\\\r return\\""',
        'strings.quote("horizontal tab\\t") == "\\"horizontal tab\\\\t\\""',
        'strings.quote("vertical \\v tab") == "\\"vertical \\\\v tab\\""',
        'strings.quote("double \\\\\\\\ slash") == "\\"double \\\\\\\\\\\\\\\\ slash\\""',
        'strings.quote("two escape sequences \\a\\n") == "\\"two escape sequences \\\\a\\\\n\\""',
        'strings.quote("verbatim") == "\\"verbatim\\""',
        'strings.quote("ends with \\\\") == "\\"ends with \\\\\\\\\\""',
        'strings.quote("\\\\ starts with") == "\\"\\\\\\\\ starts with\\""',
        'strings.quote("printable unicode😀") == "\\"printable unicode😀\\""',
        'strings.quote("mid string \\" quote") == "\\"mid string \\\\\\" quote\\""',
        'strings.quote(\'single-quote with "double quote"\') == "\\"single-quote with \\\\\\"double quote\\\\\\"\\""',
        'strings.quote("size(\'ÿ\')") == "\\"size(\'ÿ\')\\""',
        'strings.quote("завтра") == "\\"завтра\\""',
        'strings.quote("\\U0001F431\\U0001F600\\U0001F61B") == "\\"\\U0001F431\\U0001F600\\U0001F61B\\""',
        'strings.quote("ta©o©αT") == "\\"ta©o©αT\\""',
        'strings.quote("") == "\\"\\""',
        "strings.quote('%s %s').format(['hello', 'world']) == \"\\\"hello world\\\"\"",
      ]),
    );
  });

  it('errors in cel-go words', () => {
    checkAll([
      { expr: "'tacocat'.charAt(30) == ''", expect: error('index out of range: 30') },
      { expr: "'tacocat'.lastIndexOf('a', -1) == -1", expect: error('index out of range: -1') },
      { expr: "'tacocat'.indexOf('a', -1) == -1", expect: error('index out of range: -1') },
      { expr: "''.lastIndexOf('a') == -1", expect: error('index out of range: -1') },
      // An offset past the end: an error in the cel-go the API server's answers here come from
      // (newer cel-go releases answer -1).
      { expr: "'tacocat'.indexOf('a', 30) == -1", expect: error('index out of range: 30') },
      { expr: "'tacocat'.lastIndexOf('a', 30) == -1", expect: error('index out of range: 30') },
      { expr: "''.indexOf('a') == -1", expect: error('index out of range: 0') },
      { expr: '"tacocat".substring(40) == "cat"', expect: error('index out of range: 40') },
      { expr: '"tacocat".substring(-1) == "cat"', expect: error('index out of range: -1') },
      { expr: '"tacocat".substring(1, 50) == "cat"', expect: error('index out of range: 50') },
      { expr: '"tacocat".substring(49, 50) == "cat"', expect: error('index out of range: 49') },
      { expr: '"tacocat".substring(4, 3) == ""', expect: error('invalid substring range. start: 4, end: 3') },
    ]);
  });

  it('refuses calls no overload takes when checked', () => {
    const refused = [
      '42.charAt(2) == ""',
      '\'hello\'.charAt(true) == ""',
      "24.indexOf('2') == 0",
      "'hello'.indexOf(true) == 1",
      "'42'.indexOf('4', 0, 1) == 0",
      '42.split("2") == ["4"]',
      '"42".replace(2, 1) == "41"',
      '"42".replace("2", "1", 1, false) == "41"',
      '"42".split(2, 1) == ["4"]',
      '\'hello\'.substring(1, 2, 3) == ""',
      '"tacocat".substring(0, false) == ""',
    ];
    checkAll(refused.map((expr) => ({ expr, expect: compile(/no matching overload|undeclared reference/) })));
  });

  it('has version 2 from 1.29, not reverse (version 3)', () => {
    checkAll([
      { expr: "strings.quote('a') == '\"a\"'", minor: 28, expect: compile(/strings/) },
      { expr: "'a %d'.format([1]) == 'a 1'", minor: 28, expect: compile(/format/) },
      { expr: "'a %d'.format([1]) == 'a 1'", minor: 29, expect: value(true) },
      { expr: "'taco'.reverse() == 'ocat'", expect: compile(/reverse/) },
    ]);
  });
});
