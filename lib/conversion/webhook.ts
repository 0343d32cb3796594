import { DeadlineExceeded, withDeadline } from '../deadline.ts';
import {
  completeConversionRegistration,
  type ConversionRegistration,
  type ConversionRegistrationInput,
} from '../registration.ts';
import { completeConversionReview, readConversionReview } from '../review/envelope.ts';
import type { ConversionResponse, ConversionReview, KubeObject } from '../review/schemas.ts';
import { nestingDepth, setMember } from '../json.ts';
import { ConversionError, type ConvertibleObject, describeObject, metadataCopy, verifyConverted } from './verify.ts';
import {
  defineWebhook,
  isInstance,
  logFailure,
  userContext,
  type DefinedWebhook,
  type EngineAnswer,
  type ReviewEngine,
  type RunContext,
  type UnsendableAnswer,
  type WebhookContext,
} from '../webhook.ts';
import type { FailureKind } from '../metrics.ts';

export { ConversionError, type ConvertibleObject } from './verify.ts';

/** Converts one object to `desiredAPIVersion`; it gets a private copy and may change it. */
export type ConvertFn = (
  object: ConvertibleObject,
  desiredAPIVersion: string,
  ctx: WebhookContext,
) => KubeObject | Promise<KubeObject>;

/** A conversion webhook: its registration and its function. */
export interface ConversionWebhookDefinition extends ConversionRegistrationInput {
  convert: ConvertFn;
}

/** A defined conversion webhook: the Lambda handler and the registration infra reads. */
export type ConversionWebhook = DefinedWebhook<ConversionRegistration>;

/**
 * About how deeply nested an object JSON.stringify can write from a Lambda handler before
 * the call stack overflows (measured: about 4,100 levels on Node 20 with its default stack).
 */
const SERIALIZABLE_DEPTH = 4000;
/** How deep the failure path follows a converted object that could not be written (far past SERIALIZABLE_DEPTH). */
const DEPTH_WALK_LIMIT = 1_000_000;

/**
 * A copy of an object without some top-level fields: what `const { a, ...rest } = o` does,
 * several times faster (object rest takes a slow generic path in V8), for converters. A
 * `__proto__` member is kept as a member, as object rest keeps it.
 */
export function withoutFields<T extends Record<string, unknown>>(object: T, ...fields: string[]): T {
  const out: Record<string, unknown> = {};
  for (const key in object) if (!fields.includes(key)) setMember(out, key, object[key]);
  return out as T;
}

/**
 * Distinct warnings the summary line of a conversion lists, and the characters each is cut to:
 * the line stays well within one CloudWatch Logs event (256 KB; a longer line is split) even
 * with every character escaped in JSON (6 bytes each), and a reader acts on the first few.
 */
const LISTED_WARNINGS = 50;
const LISTED_WARNING_CHARS = 512;

/** What ctx.warn was given during one conversion: counted, repeats listed once, the first few kept. */
class ConversionWarnings {
  /** Calls with a warning (a string that is not empty). */
  count = 0;
  /** Calls whose warning is not listed, there being already LISTED_WARNINGS others. */
  unlisted = 0;
  private readonly listed = new Set<string>();

  /** Counts one warning, and keeps it if it is new and there is room. */
  add(message: unknown): void {
    if (typeof message !== 'string' || message.length === 0) return;
    this.count++;
    if (this.listed.has(message)) return;
    if (this.listed.size < LISTED_WARNINGS) this.listed.add(message);
    else this.unlisted++;
  }

  /** The fields of the summary line: the count, the listed warnings (cut) and the calls not listed. */
  fields(): { count: number; warnings: string[]; unlisted: number } {
    const warnings = [...this.listed].map((w) =>
      w.length > LISTED_WARNING_CHARS ? w.slice(0, LISTED_WARNING_CHARS) : w,
    );
    return { count: this.count, warnings, unlisted: this.unlisted };
  }
}

function failed(
  review: ConversionReview,
  message: string,
  fields: Record<string, unknown>,
  failure?: FailureKind,
): EngineAnswer {
  const response: Omit<ConversionResponse, 'uid'> = { result: { status: 'Failed', message } };
  return {
    body: completeConversionReview(review, response),
    fields: { ...fields, result: 'Failed', message },
    failure,
  };
}

/** The fields of a conversion's review line that the review itself gives. */
function reviewFields(review: ConversionReview): Record<string, unknown> {
  const { uid, desiredAPIVersion, objects } = review.request;
  return { reviewVersion: review.apiVersion, uid, desiredAPIVersion, objects: objects.length };
}

/**
 * The answer in place of converted objects that cannot be sent: too large for Lambda, or too
 * deeply nested (or otherwise unfit) to be written as JSON, naming the deepest object when
 * depth is the cause.
 */
function unsendableConversion(review: ConversionReview, why: UnsendableAnswer, ctx: RunContext): EngineAnswer {
  const fields = reviewFields(review);
  if (why.kind === 'oversized')
    return failed(
      review,
      `converted objects (${why.bytes} bytes as Lambda returns them) are larger than Lambda can return`,
      fields,
    );
  const { error: err, body } = why;
  const { objects } = review.request;
  const converted = (body as { response?: { convertedObjects?: unknown[] } }).response?.convertedObjects ?? [];
  // Only this failure path measures depth: the answer of every review is not walked twice.
  // Only an overflow (RangeError) is about depth, and the walk stops at a bound: an object
  // holding itself (a cycle) is endlessly deep.
  let deepest = -1;
  let depth = 0;
  for (let i = 0; err instanceof RangeError && i < converted.length; i++) {
    const d = nestingDepth(converted[i], DEPTH_WALK_LIMIT);
    if (d > depth) [deepest, depth] = [i, d];
  }
  if (err instanceof RangeError && deepest >= 0) {
    return failed(
      review,
      `converted ${describeObject(objects[deepest] ?? {}, deepest)} is nested ${depth} levels deep, more than the function can write as JSON (about ${SERIALIZABLE_DEPTH} levels)`,
      fields,
    );
  }
  const { errorId, failure } = logFailure(ctx, 'converted objects cannot be written as JSON', err);
  return failed(review, `converted objects cannot be written as JSON (error id ${errorId})`, fields, failure);
}

/**
 * Converts each object not yet at `desiredAPIVersion` and checks the result; `at.index` is the
 * object being converted, for the message when the converter throws.
 */
async function convertAll(
  objects: ConvertibleObject[],
  desiredAPIVersion: string,
  convert: ConvertFn,
  uctx: WebhookContext,
  at: { index: number },
): Promise<KubeObject[]> {
  const out: KubeObject[] = [];
  for (at.index = 0; at.index < objects.length; at.index++) {
    const index = at.index;
    const object = objects[index]!;
    // The API server leaves out objects already at the desired version; others may not.
    if (object.apiVersion === desiredAPIVersion) {
      out.push(object);
      continue;
    }
    // The parsed object is this invocation's own: the converter may change it. What the
    // checks need of the original (kind and metadata) is kept first; a shallow copy of
    // metadata is enough, as only labels and annotations are ever taken from the result
    // (and those are copied too, to tell whether the converter changed them in place).
    const original = { apiVersion: object.apiVersion, kind: object.kind } as ConvertibleObject;
    if (object.metadata !== undefined) original.metadata = metadataCopy(object.metadata);
    const converted = convert(object, desiredAPIVersion, uctx);
    const result = isPromise(converted) ? await converted : converted;
    out.push(verifyConverted(original, result, desiredAPIVersion, index));
  }
  return out;
}

function conversionEngine(_reg: ConversionRegistration, convert: ConvertFn): ReviewEngine<ConversionReview> {
  return {
    parse: readConversionReview,
    async run(review, ctx: RunContext) {
      const { uid, desiredAPIVersion, objects } = review.request;
      const fields = reviewFields(review);
      const warnings = new ConversionWarnings();
      const uctx = userContext(ctx, (message) => warnings.add(message));
      const at = { index: 0 };
      try {
        const converted = await withDeadline(
          async () => {
            const out = await convertAll(objects, desiredAPIVersion, convert, uctx, at);
            // One line however many warnings, written inside the budget: it is the converter's output.
            if (warnings.count)
              ctx.log.warn('conversion warnings', { requestId: ctx.requestId, uid, ...warnings.fields() });
            return out;
          },
          ctx.budgetMs,
          ctx.startedAt,
          ctx.now,
        );
        const response: Omit<ConversionResponse, 'uid'> = {
          result: { status: 'Success' },
          convertedObjects: converted,
        };
        return { body: completeConversionReview(review, response), fields: { ...fields, result: 'Success' } };
      } catch (err) {
        if (isInstance(err, ConversionError)) return failed(review, err.message, fields);
        const late = isInstance(err, DeadlineExceeded);
        const { errorId, failure } = logFailure(ctx, late ? 'converter too slow' : 'converter failed', err);
        const message = late
          ? `conversion did not finish within ${(err as DeadlineExceeded).budgetMs} ms (error id ${errorId})`
          : `internal error converting ${describeObject(objects[at.index] ?? {}, at.index)} (error id ${errorId})`;
        return failed(review, message, fields, failure);
      }
    },
    unsendable: unsendableConversion,
  };
}

/** Defines a conversion webhook: `convert` is called once per object not yet at the desired version. */
export function defineConversionWebhook(definition: ConversionWebhookDefinition): ConversionWebhook {
  const { convert, ...input } = definition;
  const reg = completeConversionRegistration(input);
  return defineWebhook(reg, conversionEngine(reg, convert));
}

/** How one version converts to and from the hub. */
export interface Spoke {
  /** From this version to the hub; apiVersion is set by the helper. */
  toHub(object: ConvertibleObject, ctx: WebhookContext): KubeObject | Promise<KubeObject>;
  /** From the hub to this version; apiVersion is set by the helper. */
  fromHub(object: ConvertibleObject, ctx: WebhookContext): KubeObject | Promise<KubeObject>;
}

/** Splits `group/version` (or a core `version`) into its parts. */
export function splitAPIVersion(apiVersion: string): { group: string; version: string } {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, slash), version: apiVersion.slice(slash + 1) };
}

/** splitAPIVersion remembering its last answer (read, never changed, by hubAndSpoke). */
function lastSplit(): (apiVersion: string) => { group: string; version: string } {
  let last: string | undefined;
  let parts = { group: '', version: '' };
  return (apiVersion) => {
    if (apiVersion !== last) {
      parts = splitAPIVersion(apiVersion);
      last = apiVersion;
    }
    return parts;
  };
}

/**
 * Builds a `convert` from one hub version and a spoke per other version: any version
 * reaches any other through the hub, so N versions need 2(N-1) functions.
 */
export function hubAndSpoke(options: { hub: string; spokes: Record<string, Spoke> }): ConvertFn {
  const { hub, spokes } = options;
  const known = [hub, ...Object.keys(spokes)];
  const check = (v: string) => {
    if (!known.includes(v))
      throw new ConversionError(`unsupported version ${JSON.stringify(v)}; this webhook converts ${known.join(', ')}`);
  };
  // The objects of a review share their versions: each is split once, not once per object.
  const splitFrom = lastSplit();
  const splitTo = lastSplit();
  return (object, desiredAPIVersion, ctx) => {
    const from = splitFrom(object.apiVersion);
    const to = splitTo(desiredAPIVersion);
    check(from.version);
    check(to.version);
    if (from.group !== to.group)
      throw new ConversionError(
        `cannot convert between groups ${JSON.stringify(from.group)} and ${JSON.stringify(to.group)}`,
      );
    const atHub = from.group ? `${from.group}/${hub}` : hub;
    const toDesired = (hubObject: KubeObject): KubeObject | Promise<KubeObject> =>
      to.version === hub
        ? hubObject
        : step(
            spokes[to.version]!.fromHub({ ...hubObject, apiVersion: atHub, kind: object.kind }, ctx),
            desiredAPIVersion,
            object.kind,
          );
    if (from.version === hub) return toDesired(object);
    const hubObject = step(spokes[from.version]!.toHub(object, ctx), atHub, object.kind);
    // Synchronous spokes stay synchronous: no promise, no microtask per object.
    return isPromise(hubObject) ? hubObject.then(toDesired) : toDesired(hubObject);
  };
}

/** True for a promise (async functions return native ones; that is all a converter may return). */
function isPromise<T>(value: T | Promise<T>): value is Promise<T> {
  return value instanceof Promise;
}

/** Sets apiVersion and kind on a spoke's result (its own object), now or when its promise settles. */
function step(
  result: KubeObject | Promise<KubeObject>,
  apiVersion: string,
  kind: string,
): KubeObject | Promise<KubeObject> {
  const stamp = (r: KubeObject) => {
    r.apiVersion = apiVersion;
    r.kind = kind;
    return r;
  };
  return isPromise(result) ? result.then(stamp) : stamp(result);
}
