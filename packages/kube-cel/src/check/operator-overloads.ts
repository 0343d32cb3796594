/**
 * cel-go's standard overloads of the operators, in the order it declares them
 * (common/stdlib/standard.go): where a free type variable meets an operator, the first overload its
 * operands fit binds it (`[][0] + dyn(x)` is bytes, `_+_`'s first).
 */

const TS = 'google.protobuf.Timestamp';
const DUR = 'google.protobuf.Duration';

/**
 * Signatures written `int int int` (the parameters, then the result), `A` and `B` type parameters,
 * `list<A>` and `map<A,B>`, `ts` and `dur` the timestamp and duration types.
 */
function signatures(...texts: string[]): string[][] {
  return texts.map((t) => t.split(' ').map((w) => (w === 'ts' ? TS : w === 'dur' ? DUR : w)));
}

/** The comparisons, with the cross-type numeric ones the API server enables. */
const ORDERED = signatures(
  ...'bool bool|int int|int double|int uint|uint uint|uint double|uint int|double double|double int|double uint|string string|bytes bytes|ts ts|dur dur'
    .split('|')
    .map((s) => `${s} bool`),
);

/** cel-go's standard overloads of each operator, in its declaration order (common/stdlib/standard.go). */
export const OPERATORS: Record<string, string[][]> = {
  '+': signatures(
    'bytes bytes bytes',
    'double double double',
    'dur dur dur',
    'dur ts ts',
    'ts dur ts',
    'int int int',
    'list<A> list<A> list<A>',
    'string string string',
    'uint uint uint',
  ),
  '-': signatures('double double double', 'dur dur dur', 'int int int', 'ts dur ts', 'ts ts dur', 'uint uint uint'),
  '*': signatures('double double double', 'int int int', 'uint uint uint'),
  '/': signatures('double double double', 'int int int', 'uint uint uint'),
  '%': signatures('int int int', 'uint uint uint'),
  '==': signatures('A A bool'),
  '!=': signatures('A A bool'),
  '<': ORDERED,
  '<=': ORDERED,
  '>': ORDERED,
  '>=': ORDERED,
  in: signatures('A list<A> bool', 'A map<A,B> bool'),
  '[]': signatures('list<A> int A', 'map<A,B> A B'),
  '-_': signatures('double double', 'int int'),
  '!_': signatures('bool bool'),
  '?:': signatures('bool A A A'),
};

/** cel-go's names of the operators. */
export const CEL_GO_NAMES: Record<string, string> = {
  '+': '_+_',
  '-': '_-_',
  '*': '_*_',
  '/': '_/_',
  '%': '_%_',
  '<': '_<_',
  '<=': '_<=_',
  '>': '_>_',
  '>=': '_>=_',
  '==': '_==_',
  '!=': '_!=_',
  in: '@in',
  '[]': '_[_]',
  '-_': '-_',
  '!_': '!_',
  '?:': '_?_:_',
};
