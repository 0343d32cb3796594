import type { Operation as PatchOperation } from 'fast-json-patch';

const DECISION = Symbol.for('kube-lambda-webhooks.decision');
// Marks the denials of `errored`: the webhook failed, so enforcement modes do not soften them.
const ERRORED = Symbol('errored');
// Holds, for the log, the code a denial was given when it was replaced by the default.
const REPLACED_CODE = Symbol('replacedCode');

// The codes a denial may carry: the API server answers the rejected request with it as the
// HTTP status, and decodes it into Status.code, an int32. A code it cannot decode fails the
// whole answer (and failurePolicy Ignore then admits what was denied); HTTP defines 100..599.
const MIN_STATUS_CODE = 100;
const MAX_STATUS_CODE = 599;

/** `metav1.Status` of a denial. */
export interface DecisionStatus {
  code: number;
  message: string;
  reason: string;
}

/** A warning, or warnings (an array, a Set, a generator), as the decision constructors take them. */
export type Warnings = string | Iterable<string>;

/** An admission decision. Build it with `allow`, `deny`, `errored` or `patched`; never by hand. */
export interface Decision {
  readonly [DECISION]: true;
  readonly allowed: boolean;
  readonly status?: DecisionStatus;
  /** JSONPatch operations to return; only from `patched` (mutating webhooks). */
  readonly patch?: readonly PatchOperation[];
  /** The warnings in order, less those the API server's recorder could never show (see `WarningList`). */
  readonly warnings: readonly string[];
  readonly auditAnnotations?: Readonly<Record<string, string>>;
  /** A copy of this decision with more warnings: each argument a warning or a list of them. */
  withWarnings(...warnings: Warnings[]): Decision;
  /** A copy of this decision with audit annotations (keys are prefixed by the API server with the webhook name). */
  withAuditAnnotations(annotations: Record<string, string>): Decision;
}

/**
 * A decision's warnings: the first `length` kept warnings of `list`. Decisions made one from
 * another by `withWarnings` share one list, appended to in place by the newest, so adding
 * warnings one call at a time costs what adding them as one list does; a decision that is no
 * longer the newest copies its own warnings first (copy on branch), leaving the others' intact.
 */
interface SharedWarnings {
  /** Undefined for none yet: most decisions carry no warnings and never need a list. */
  readonly list: WarningList | undefined;
  readonly length: number;
}

/** The warnings of a decision without any. */
const NO_WARNINGS: SharedWarnings = { list: undefined, length: 0 };

type DecisionFields = Omit<Decision, typeof DECISION | 'warnings' | 'withWarnings' | 'withAuditAnnotations'> & {
  [ERRORED]?: true;
  [REPLACED_CODE]?: string;
};

/**
 * `shared` with `more` added: in place when it is the newest share of its list, else on a copy;
 * `shared` itself when none of them is kept (repeats, or the recorder has stopped).
 */
function withMore(shared: SharedWarnings, more: Warnings[]): SharedWarnings {
  let list = shared.list;
  if (list === undefined) list = new WarningList();
  else if (list.items.length !== shared.length) {
    list = new WarningList();
    for (let i = 0; i < shared.length; i++) list.add(shared.list!.items[i]);
  }
  for (const warnings of more) list.addAll(warnings);
  return list.items.length === shared.length ? shared : { list, length: list.items.length };
}

function make(fields: DecisionFields, shared: SharedWarnings): Decision {
  let decision: Decision;
  const withWarnings = (...more: Warnings[]): Decision => {
    // The newest share of a list the recorder has stopped reading: nothing more can be kept.
    if (shared.list?.complete && shared.list.items.length === shared.length) return decision;
    const next = withMore(shared, more);
    // Nothing kept: this very decision is the answer (decisions never change).
    return next === shared ? decision : make(fields, next);
  };
  const withAuditAnnotations = (annotations: Record<string, string>) =>
    make({ ...fields, auditAnnotations: { ...fields.auditAnnotations, ...annotations } }, shared);
  decision = { [DECISION]: true, ...fields, warnings: [], withWarnings, withAuditAnnotations };
  const list = shared.list;
  // With warnings the list is copied out of the shared one when first read, and kept: later
  // additions by others never show. Without (most decisions) it stays an empty array of its own:
  // an accessor on each new object costs microseconds, more than the rest of the decision.
  if (list !== undefined) {
    let warnings: string[] | undefined;
    Object.defineProperty(decision, 'warnings', {
      get: () => (warnings ??= list.items.slice(0, shared.length)),
      enumerable: true,
    });
  }
  return Object.freeze(decision);
}

/** True for values built by the decision constructors. */
export function isDecision(value: unknown): value is Decision {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[DECISION] === true;
}

/**
 * Admit the request, optionally with warnings shown to the user: each argument a warning or a
 * list of them (`allow(list)` takes a list of any length; a generator is asked only for as many
 * as the API server could show).
 */
export function allow(...warnings: Warnings[]): Decision {
  return make({ allowed: true }, keptWarnings(...warnings));
}

/** Options of a denial. */
export interface DenyOptions {
  /**
   * HTTP status code shown to the user; the API server turns codes below 400 into 400. Default
   * 403, which also replaces a code that is not an integer from 100 to 599 (the review log line
   * names the code given, as `replacedCode`).
   */
  code?: number;
  /** Machine-readable reason (`metav1.StatusReason`). Default `Forbidden`. */
  reason?: string;
}

/** Reject the request; the user sees `admission webhook "<name>" denied the request: <message>`. */
export function deny(message: string, options: DenyOptions = {}): Decision {
  return denial(message, options.code ?? 403, 403, options.reason);
}

/**
 * Reject the request because the webhook itself failed (controller-runtime's `Errored`); a
 * code that is not an integer from 100 to 599 is replaced by 500.
 */
export function errored(code: number, message: string): Decision {
  return denial(message, code, 500, undefined, true);
}

/** A denial with `code`, or with `fallback` when `code` is no status code the API server can take. */
function denial(
  message: string,
  code: unknown,
  fallback: number,
  reason: string | undefined,
  failed = false,
): Decision {
  const valid = isStatusCode(code);
  const status = valid ? code : fallback;
  const fields: DecisionFields = {
    allowed: false,
    status: { code: status, message, reason: reason ?? reasonFor(status) },
  };
  if (failed) fields[ERRORED] = true;
  if (!valid) fields[REPLACED_CODE] = describeCode(code);
  return make(fields, keptWarnings());
}

function isStatusCode(code: unknown): code is number {
  return Number.isInteger(code) && (code as number) >= MIN_STATUS_CODE && (code as number) <= MAX_STATUS_CODE;
}

/** A code as given, for the log: numbers as written, anything else by its type. */
function describeCode(code: unknown): string {
  if (typeof code === 'number' || typeof code === 'bigint') return String(code);
  if (typeof code === 'string') return JSON.stringify(code);
  return code === null ? 'null' : typeof code;
}

/** The code a denial was given when it was not a status code and the default was sent instead. */
export function replacedCode(decision: Decision): string | undefined {
  return (decision as { [REPLACED_CODE]?: string })[REPLACED_CODE];
}

/** True for a denial made by `errored` (a failure of the webhook, not a policy's denial). */
export function isErrored(decision: Decision): boolean {
  return (decision as { [ERRORED]?: true })[ERRORED] === true;
}

/** Admit the request with these JSONPatch operations (checked against the object before they are sent) and warnings, as `allow` takes them. */
export function patched(operations: readonly PatchOperation[], ...warnings: Warnings[]): Decision {
  return make({ allowed: true, patch: operations }, keptWarnings(...warnings));
}

const REASONS: Record<number, string> = {
  400: 'BadRequest',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'NotFound',
  409: 'Conflict',
  422: 'Invalid',
  429: 'TooManyRequests',
  500: 'InternalError',
  503: 'ServiceUnavailable',
  504: 'Timeout',
};

function reasonFor(code: number): string {
  return REASONS[code] ?? (code >= 500 ? 'InternalError' : 'BadRequest');
}

/**
 * The API server's limits on warnings (k8s.io/apiserver endpoints/filters/warning.go): once
 * the warnings of a response add up to more than 4096 characters (Unicode code points, Go's
 * runes), every warning is cut to its first 256 characters and more are added only while
 * fewer than 4096 characters have been written.
 */
export const WARNINGS_TOTAL_LIMIT = 4096;
/** Length in characters each warning is cut to once the total limit is passed (no `...` is added). */
export const WARNING_ITEM_LIMIT = 256;

// unicode.IsControl: C0, DEL and C1. A warning holding one is refused by the API server's
// NewWarningHeader (a header cannot carry it), so the whole warning is dropped.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/**
 * The string with lone surrogates replaced by U+FFFD, as the API server reads it: JSON
 * carries a lone surrogate as an escape and Go's decoder turns it into U+FFFD.
 * (String.prototype.toWellFormed is in Node 20 but not in the ES2023 library compiled against.)
 */
function wellFormed(text: string): string {
  return (text as unknown as { toWellFormed(): string }).toWellFormed();
}

/** Number of code points of a well-formed string (what Go's utf8.RuneCountInString counts). */
function runeCount(text: string): number {
  let n = text.length;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit >= 0xd800 && unit <= 0xdbff) {
      n--;
      i++;
    }
  }
  return n;
}

/** The first `limit` code points of a well-formed string. */
function firstRunes(text: string, limit: number): string {
  // Cheap exit: a string of at most `limit` UTF-16 units has at most `limit` code points.
  if (text.length <= limit) return text;
  let end = 0;
  for (let runes = 0; runes < limit && end < text.length; runes++) {
    const unit = text.charCodeAt(end);
    end += unit >= 0xd800 && unit <= 0xdbff ? 2 : 1;
  }
  return text.slice(0, end);
}

/**
 * The API server's warning recorder, step for step, with its limits as parameters:
 * each warning goes through `AddWarning` in order. Every step is linear in the text it
 * looks at, repeats are found in a Set, and once truncation has begun and the limit is
 * reached every later warning is ignored without being looked at, as the recorder does.
 */
export function recordWarnings(warnings: Iterable<string>, totalLimit: number, itemLimit: number): string[] {
  const recorded = new Set<string>();
  // Warnings recorded before truncation began, for the replay; unused once it has.
  const ordered: string[] = [];
  let headers: string[] = [];
  let written = 0;
  let truncating = false;
  for (const raw of warnings) {
    if (typeof raw !== 'string' || raw.length === 0) continue;
    if (truncating && written >= totalLimit) break;
    const text = wellFormed(raw);
    if (recorded.has(text)) continue;
    recorded.add(text);
    if (!truncating) ordered.push(text);
    let item = text;
    let length = runeCount(text);
    if (truncating && length > itemLimit) {
      item = firstRunes(text, itemLimit);
      length = itemLimit;
    }
    if (CONTROL.test(item)) continue;
    if (written + length <= totalLimit || truncating) {
      written += length;
      headers.push(item);
      continue;
    }
    // Past the limit: start truncating, and replay everything recorded so far cut to size.
    truncating = true;
    written = 0;
    headers = [];
    for (const earlier of ordered) {
      let cut = earlier;
      let n = runeCount(earlier);
      if (n > itemLimit) {
        cut = firstRunes(earlier, itemLimit);
        n = itemLimit;
      }
      if (CONTROL.test(cut)) continue;
      written += n;
      headers.push(cut);
    }
    ordered.length = 0;
  }
  return headers;
}

/**
 * The warnings the API server would show for these, in order: empty ones and repeats left
 * out, any holding a control character dropped (the API server refuses them), and the
 * 4096/256 limits applied exactly as its warning recorder applies them.
 */
export function sanitizeWarnings(warnings: Iterable<string>): string[] {
  return recordWarnings(warnings, WARNINGS_TOTAL_LIMIT, WARNING_ITEM_LIMIT);
}

/**
 * Warnings in order, keeping only those that can change what the API server's recorder shows,
 * whatever comes before or after them: so any number of warnings costs what it can show.
 * Left out are empty ones, repeats, ones it always drops (a control character within the
 * first 256 characters), and all that come once it has surely stopped (see `complete`).
 * `recordWarnings` gives the same result on the kept list, in any company, as on them all.
 */
export class WarningList {
  /** The kept warnings, in order (lone surrogates read as U+FFFD, as the recorder reads them). */
  readonly items: string[] = [];
  private readonly seen = new Set<string>();
  /** Characters the kept warnings count for once the recorder truncates (each cut to the item limit). */
  private truncatedLength = 0;
  /** Characters of the kept warnings without a control character (what they count for before it truncates). */
  private wholeLength = 0;

  constructor(
    private readonly totalLimit = WARNINGS_TOTAL_LIMIT,
    private readonly itemLimit = WARNING_ITEM_LIMIT,
  ) {}

  /**
   * True once the recorder would show no later warning, whatever came before: the kept
   * warnings are too long to fit whole, so it is truncating by then; and each of them was
   * written (or replayed) cut to the item limit, so it has reached its total limit too.
   */
  get complete(): boolean {
    return this.truncatedLength >= this.totalLimit && this.wholeLength > this.totalLimit;
  }

  /** Adds one warning (ignored when it is not a string, or cannot be shown). */
  add(warning: unknown): void {
    if (typeof warning !== 'string' || warning.length === 0 || this.complete) return;
    const text = wellFormed(warning);
    if (this.seen.has(text)) return;
    this.seen.add(text);
    const length = runeCount(text);
    if (CONTROL.test(length > this.itemLimit ? firstRunes(text, this.itemLimit) : text)) return;
    this.items.push(text);
    this.truncatedLength += Math.min(length, this.itemLimit);
    // A control character past the cut: shown only cut, once the recorder truncates.
    if (length <= this.itemLimit || !CONTROL.test(text)) this.wholeLength += length;
  }

  /** Adds a warning or a list of them, taking no more from the list once complete. */
  addAll(warnings: Warnings): void {
    if (typeof warnings === 'string') {
      this.add(warnings);
      return;
    }
    // Anything else that is not a list is no warning, as a non-string warning is not.
    if (typeof (warnings as { [Symbol.iterator]?: unknown } | null | undefined)?.[Symbol.iterator] !== 'function')
      return;
    if (this.complete) return;
    for (const warning of warnings) {
      this.add(warning);
      if (this.complete) break;
    }
  }
}

/** The kept warnings (see `WarningList`) of these, in order, as a new shared list. */
function keptWarnings(...lists: Warnings[]): SharedWarnings {
  if (lists.length === 0) return NO_WARNINGS;
  const list = new WarningList();
  for (const warnings of lists) list.addAll(warnings);
  // None kept (`allow([])`, most often): a list that holds nothing shows and stops nothing.
  return list.items.length ? { list, length: list.items.length } : NO_WARNINGS;
}
