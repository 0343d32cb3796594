import { type EventSource, type HttpResponse, toolsFor } from '../../../lib/internal.ts';

export type { HttpResponse } from '../../../lib/internal.ts';
export { BAD_GATEWAY, jsonMessage } from '../../../lib/internal.ts';

/**
 * Turns a Lambda result into the HTTP response the event source would send, as that
 * source's module says; `event` is the event the function was given.
 */
export function httpFromResult(format: EventSource, result: unknown, event?: Record<string, unknown>): HttpResponse {
  return toolsFor(format).respond(result, event);
}
