// The CEL engine's standard library as a function's bundle carries it: declared when first looked
// up, not when the engine is imported. The engine builds its registry of the standard library (about
// 400 overloads of functions and operators, each signature parsed into types and declarations) when
// its module is evaluated; a function evaluating a few conditions looks up a few dozen of them. In a
// bundle, the registrations the engine makes while it loads are kept as they are called, filed under
// what looks them up (a function's name, receiver and number of arguments; an operator), and each
// group is registered, in its order, the first time something looks it up: its declarations then
// come first among those of the same key in every registry derived from the engine's, as they do
// when registered at once. Everything is registered at once where all of it is read (the checker's
// list of declared functions). Where the engine's text no longer reads as expected, it is bundled
// unchanged (a test says so), and the package runs unbundled (its tests, the CLI) as the engine is.

/** A replacement in the engine's text: `from` must occur exactly once. */
interface Edit {
  from: string;
  to: string;
}

/** Helpers the registry's module gets (before its Registry class). */
const HELPERS = `
// Which keys of the standard library an array or map of declarations holds (deferred registry).
const stdSynced = new WeakMap()
function stdSyncedOf(o) {
  let s = stdSynced.get(o)
  if (!s) stdSynced.set(o, (s = new Set()))
  return s
}
function stdFunctionKey(s) {
  const m = /^(?:([a-zA-Z0-9.<>]+)\\.)?(\\w+)\\(([^)]*)\\):/.exec(s)
  return m ? \`\${m[1] ? 'rcall' : 'call'}:\${m[2]}:\${splitByComma(m[3]).length}\` : undefined
}
function deferStd(pending, key, register) {
  const list = pending.get(key)
  if (list) list.push(register)
  else pending.set(key, [register])
}

export class Registry {
`;

/** Methods the Registry class gets (before its clone method). */
const METHODS = `  deferRegistrations(on) {
    if (this.#root !== this) throw new Error('only a root registry defers registrations')
    if (on) this.#std ??= {deferring: false, busy: false, fns: new Map(), ops: new Map(), fnDecls: new Map(), opDecls: new Map()}
    if (this.#std) this.#std.deferring = on
  }

  #materializeStd(group, op) {
    const std = this.#std
    const pending = op ? std.ops : std.fns
    const list = pending.get(group)
    pending.delete(group)
    const arr = op ? this.#operators : this.#functions
    const start = arr.length
    const {deferring, busy} = std
    const locked = this.#locked
    std.deferring = false
    std.busy = true
    this.#locked = false
    try {
      for (const register of list) register()
    } finally {
      std.deferring = deferring
      std.busy = busy
      this.#locked = locked
    }
    const made = op ? std.opDecls : std.fnDecls
    const map = op ? this.#operatorsByOp : this.#functionsByKey
    for (const decl of arr.slice(start)) {
      const key = op ? decl.operator : decl.partitionKey
      if (key !== group && !(op && group === '==' && key === '!=')) {
        throw new Error(\`Deferred declaration '\${decl.signature}' filed under '\${group}'\`)
      }
      const list = made.get(key)
      if (list) list.push(decl)
      else made.set(key, [decl])
      stdSyncedOf(arr).add(key)
      if (map) stdSyncedOf(map).add(key)
    }
  }

  #syncStd(key, op) {
    const root = this.#root
    const std = root.#std
    if (std.busy) return
    const group = op && key === '!=' ? '==' : key
    if ((op ? std.ops : std.fns).has(group)) root.#materializeStd(group, op)
    const decls = (op ? std.opDecls : std.fnDecls).get(key)
    if (!decls) return
    const arr = op
      ? this.#operators || this.#others.operators
      : this.#functions || this.#others.functions
    const listed = stdSyncedOf(arr)
    if (!listed.has(key)) {
      arr.unshift(...decls)
      listed.add(key)
    }
    const map = op ? this.#operatorsByOp : this.#functionsByKey
    const mapped = map && stdSyncedOf(map)
    if (mapped && !mapped.has(key)) {
      const c = new Candidates(this)
      for (const decl of decls) c.add(decl)
      for (const decl of map.get(key) || []) c.add(decl)
      map.set(key, c)
      mapped.add(key)
    }
  }

  #syncAllStd() {
    const std = this.#root.#std
    for (const op of [false, true]) {
      for (const group of [...(op ? std.ops : std.fns).keys()]) this.#syncStd(group, op)
      for (const key of [...(op ? std.opDecls : std.fnDecls).keys()]) this.#syncStd(key, op)
    }
  }

  clone(opts) {
`;

/** The registry's edits (registry.js). */
export const REGISTRY_EDITS: readonly Edit[] = [
  { from: '\nexport class Registry {\n', to: HELPERS },
  { from: '  #locked = false\n', to: '  #locked = false\n  #root = this\n  #std = null\n' },
  { from: '      this.#parent = parent\n', to: '      this.#parent = parent\n      this.#root = parent.#root\n' },
  {
    from: '      this.#operators = []\n      this.#functions = []\n',
    to: '      this.#operators = []\n      this.#functions = []\n      stdSyncedOf(this.#operators)\n      stdSyncedOf(this.#functions)\n',
  },
  {
    from: '    return (this.#operators = [...this.#others.operators])\n',
    to: '    const copy = [...this.#others.operators]\n    stdSynced.set(copy, new Set(stdSyncedOf(this.#others.operators)))\n    return (this.#operators = copy)\n',
  },
  {
    from: '    return (this.#functions = [...this.#others.functions])\n',
    to: '    const copy = [...this.#others.functions]\n    stdSynced.set(copy, new Set(stdSyncedOf(this.#others.functions)))\n    return (this.#functions = copy)\n',
  },
  {
    from: `  operatorCandidates(op) {
    if (this.#operatorsByOp) return this.#ensureCandiate(this.#operatorsByOp, op)
    const c = (this.#operatorsByOp = new Map())
    for (const decl of this.#getOperators()) this.#ensureCandiate(c, decl.operator).add(decl)
    return this.#ensureCandiate(c, op)
  }
`,
    to: `  operatorCandidates(op) {
    if (!this.#operatorsByOp) {
      const ops = this.#getOperators()
      const c = (this.#operatorsByOp = new Map())
      stdSynced.set(c, new Set(stdSyncedOf(ops)))
      for (const decl of ops) this.#ensureCandiate(c, decl.operator).add(decl)
    }
    if (this.#root.#std) this.#syncStd(op, true)
    return this.#ensureCandiate(this.#operatorsByOp, op)
  }
`,
  },
  {
    from: `  #functionCandidates(key) {
    if (this.#functionsByKey) return this.#ensureCandiate(this.#functionsByKey, key)
    const c = (this.#functionsByKey = new Map())
    for (const decl of this.#getFunctions()) this.#ensureCandiate(c, decl.partitionKey).add(decl)
    return this.#ensureCandiate(c, key)
  }
`,
    to: `  #functionCandidates(key) {
    if (!this.#functionsByKey) {
      const fns = this.#getFunctions()
      const c = (this.#functionsByKey = new Map())
      stdSynced.set(c, new Set(stdSyncedOf(fns)))
      for (const decl of fns) this.#ensureCandiate(c, decl.partitionKey).add(decl)
    }
    if (this.#root.#std) this.#syncStd(key, false)
    return this.#ensureCandiate(this.#functionsByKey, key)
  }
`,
  },
  { from: '  getDefinitions() {\n', to: '  getDefinitions() {\n    if (this.#root.#std) this.#syncAllStd()\n' },
  { from: '  clone(opts) {\n', to: METHODS },
  {
    from: '  registerFunctionOverload(s, handler, opts) {\n',
    to: `  registerFunctionOverload(s, handler, opts) {
    const std = this.#std
    if (std?.deferring && typeof s === 'string' && typeof handler === 'function') {
      const key = !opts?.params && !opts?.receiverType && !opts?.name && stdFunctionKey(s)
      if (key) return deferStd(std.fns, key, () => this.#registerFunctionOverloadNow(s, handler, opts))
    }
    return this.#registerFunctionOverloadNow(s, handler, opts)
  }

  #registerFunctionOverloadNow(s, handler, opts) {
`,
  },
  {
    from: '  unaryOverload(op, typeStr, handler, returnTypeStr, async) {\n',
    to: `  unaryOverload(op, typeStr, handler, returnTypeStr, async) {
    const std = this.#std
    if (!std?.deferring) return this.#unaryOverloadNow(op, typeStr, handler, returnTypeStr, async)
    const register = () => this.#unaryOverloadNow(op, typeStr, handler, returnTypeStr, async)
    return deferStd(std.ops, \`\${op}_\`, register)
  }

  #unaryOverloadNow(op, typeStr, handler, returnTypeStr, async) {
`,
  },
  {
    from: '  binaryOverload(leftTypeStr, op, rightTypeStr, handler, returnTypeStr, async) {\n',
    to: `  binaryOverload(leftTypeStr, op, rightTypeStr, handler, returnTypeStr, async) {
    const std = this.#std
    const args = [leftTypeStr, op, rightTypeStr, handler, returnTypeStr, async]
    if (!std?.deferring) return this.#binaryOverloadNow(...args)
    return deferStd(std.ops, op === '!=' ? '==' : op, () => this.#binaryOverloadNow(...args))
  }

  #binaryOverloadNow(leftTypeStr, op, rightTypeStr, handler, returnTypeStr, async) {
`,
  },
];

/** The engine's module evaluation: its standard library registered with the registrations deferred. */
export const EVALUATOR_EDITS: readonly Edit[] = [
  {
    from: `const globalRegistry = createRegistry({enableOptionalTypes: false})
registerFunctions(globalRegistry)
registerOverloads(globalRegistry)
registerMacros(globalRegistry)
`,
    to: `const globalRegistry = createRegistry({enableOptionalTypes: false})
globalRegistry.deferRegistrations(true)
registerFunctions(globalRegistry)
registerOverloads(globalRegistry)
registerMacros(globalRegistry)
globalRegistry.deferRegistrations(false)
`,
  },
];

/** `text` with `edits` made, or undefined when any `from` is not found exactly once. */
export function edited(text: string, edits: readonly Edit[]): string | undefined {
  let out = text;
  for (const { from, to } of edits) {
    if (out.split(from).length !== 2) return undefined;
    out = out.replace(from, () => to);
  }
  return out;
}
