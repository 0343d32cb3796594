/**
 * The words and positions of cel-go's checker, and the parts of the engine's checker the
 * matchConditions environment reads to give them: types printed as cel-go prints them
 * (`list(int)`, `null_type`), operators by cel-go's names (`_+_`, `@in`), positions where cel-go's
 * parser places a node (an operator at its token, a call at its parenthesis).
 */

/** One refusal: the offset cel-go reports it at (in the checked text) and its message. */
export interface CheckIssue {
  start: number;
  message: string;
  /** A refusal of cel-go's parser (a macro's arguments): when there is one, its checker never runs. */
  parse?: boolean;
}

/** The engine's type of a checked expression (the parts used here). */
export interface CelType {
  kind: string;
  name: string;
  keyType?: CelType;
  valueType?: CelType;
  unify(registry: unknown, other: CelType): CelType | null;
}

/** The engine's checker (the parts used here). */
export interface Checker {
  check(node: unknown, scope: unknown): CelType;
  getType(name: string): CelType;
  registry: unknown;
  objectTypes: Map<string, { fields?: Record<string, unknown> }>;
}

export type Check = (chk: Checker, node: Node, scope: unknown) => CelType;

export type MacroCheck = (chk: Checker, macro: unknown, scope: unknown) => CelType;

/** A node of the parsed expression (the parts used here). */
export interface Node {
  op: string;
  args: unknown;
  start: number;
  end: number;
  input: string;
  checkedType?: CelType;
  argTypes?: CelType[];
  readonly meta: { check: Check; alternate?: Node; macro?: { typeCheck?: MacroCheck }; label?: string };
}

/** An error the engine raises while checking. */
export interface EngineError {
  code?: string;
  node?: Node;
  summary?: string;
  message?: string;
}

/** cel-go's names of the operators. */
export const OPERATOR_NAMES: Record<string, string> = {
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
  '!_': '!_',
  '-_': '-_',
  '[]': '_[_]',
  '[?]': '_[?_]',
};

/** Types cel-go declares opaque (no fields): selecting a field of one is refused as of an int. */
export const OPAQUE = /^(?:kubernetes\.(?:Quantity|URL|Semver)|net\.(?:IP|CIDR)|google\.protobuf\.\w+)$/;

/** A type as cel-go prints it: `list(int)`, `map(string, dyn)`, `null_type`; a free parameter is dyn. */
export function celGoType(t: CelType | undefined): string {
  if (!t || t.kind === 'dyn' || t.kind === 'param') return 'dyn';
  if (t.kind === 'list') return `list(${celGoType(t.valueType)})`;
  if (t.kind === 'map') return `map(${celGoType(t.keyType)}, ${celGoType(t.valueType)})`;
  if (t.kind === 'optional') return `optional_type(${celGoType(t.valueType)})`;
  if (t.name === 'null') return 'null_type';
  return t.name;
}

/**
 * A type the engine names (`list<int>`, `map`, `optional<string>`), as cel-go prints it
 * (`list(int)`, `map(dyn, dyn)`, `optional_type(string)`).
 */
export function celGoTypeName(name: string): string {
  return name
    .replace(/\bnull\b/g, 'null_type')
    .replace(/\boptional</g, 'optional_type<')
    .replace(/\blist\b(?!<)/g, 'list<dyn>')
    .replace(/\bmap\b(?!<)/g, 'map<dyn, dyn>')
    .replaceAll('<', '(')
    .replaceAll('>', ')');
}

export const isNode = (v: unknown): v is Node =>
  !!v && typeof v === 'object' && typeof (v as Node).op === 'string' && 'meta' in (v as object);

/** The offset of the first `token` at or after `from`, comments skipped; `fallback` when none. */
export function tokenAt(input: string, from: number, token: string, fallback: number): number {
  for (let i = Math.max(0, from); i < input.length; i++) {
    if (input.startsWith('//', i)) {
      const eol = input.indexOf('\n', i);
      if (eol < 0) break;
      i = eol;
    } else if (input.startsWith(token, i)) return i;
  }
  return fallback;
}

/**
 * Where cel-go's parser places a node: an operator at its token (`+`, `?`, `.`, `[`), a call at its
 * opening parenthesis, a macro's expansion at its call's parenthesis, the rest at their start.
 */
export function locationOf(node: Node, generated: WeakMap<object, number>): number {
  const at = generated.get(node);
  if (at !== undefined) return at;
  const args = node.args as Node[];
  const after = (token: string) => tokenAt(node.input, args[0]!.end, token, node.start);
  if (node.op === '?:') return after('?');
  if (node.op === '.' || node.op === '.?') return after('.');
  if (node.op === '[]' || node.op === '[?]') return after('[');
  if (node.op === 'call') return tokenAt(node.input, node.start, '(', node.start);
  if (node.op === 'rcall') {
    const receiver = (node.args as unknown[])[1] as Node;
    return tokenAt(node.input, receiver.end, '(', node.start);
  }
  if (node.op === '&&' || node.op === '||' || (node.op in OPERATOR_NAMES && Array.isArray(node.args)))
    return after(node.op);
  return node.start;
}

/** What the environment's checker needs to know of the environment: the function names it declares. */
export interface CheckerEnvironment {
  functions: ReadonlySet<string>;
}

/** What a wrapped check records into. */
export interface Site {
  issues: CheckIssue[];
  generated: WeakMap<object, number>;
  env: CheckerEnvironment;
  /** The engine's checker, once a node was checked. */
  checker?: Checker;
}

export const args = (n: Node) => n.args as Node[];

/** True for the kinds cel-go's checker assigns null to (objects, opaque types, timestamps, optionals). */
export const nullable = (t: CelType) => t.kind === 'message' || t.kind === 'optional';

/** The overload error of a call or operator, as cel-go words it. */
export function noOverload(name: string, types: CelType[], member: boolean): string {
  const args = (member ? types.slice(1) : types).map(celGoType).join(', ');
  return `found no matching overload for '${name}' applied to '${member ? `${celGoType(types[0])}.` : ''}(${args})'`;
}

/** True when cel-go's checker takes a value of type `b` where `a` is expected. */
export function assignable(chk: Checker, a: CelType | undefined, b: CelType | undefined): boolean {
  if (!a || !b) return true;
  return a.unify(chk.registry, b) !== null;
}

export const flexible = (t: CelType | undefined) => !t || t.kind === 'dyn' || t.kind === 'param';

/** Records an issue at a node's position. */
export function addIssue(site: Site, node: Node, message: string): void {
  site.issues.push({ start: locationOf(node, site.generated), message });
}

/** A bool expected where a value of type `t` is. */
export function boolMismatch(site: Site, node: Node, t: CelType): void {
  addIssue(site, node, `expected type 'bool' but found '${celGoType(t)}'`);
}
