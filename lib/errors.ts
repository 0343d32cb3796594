/**
 * The one base of the errors the library throws. Each kind has its own class (so `instanceof`
 * and `name` tell them apart, and their messages say what went wrong) and a stable `code`, the
 * same in every release, for logs, alarms and tests to match on instead of a message.
 */
export abstract class WebhookError extends Error {
  /** What kind of failure this is: an upper-case identifier, stable across releases (`CONVERSION_FAILED`). */
  abstract readonly code: string;
}
