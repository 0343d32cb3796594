import { describeRequest } from '../admission/match.ts';
import type { Registration } from '../registration.ts';
import type { AdmissionReview, ConversionReview, KubeObject } from '../review/schemas.ts';
import type { FunctionFailure } from './failures.ts';

/** What invoke returned, as much of it as the messages read. */
interface Answer {
  allowed?: boolean;
  status?: unknown;
  message?: string;
  patch?: unknown[];
}

/** `namespace/name` of an object, or its name, or nothing. */
function objectName(object: KubeObject | null | undefined): string | undefined {
  const name = object?.metadata?.name;
  if (typeof name !== 'string' || !name) return undefined;
  const namespace = object?.metadata?.namespace;
  return typeof namespace === 'string' && namespace ? `${namespace}/${name}` : name;
}

/** The review a function was sent, as a failure message names it. */
export function describeReview(review: AdmissionReview | ConversionReview): string {
  if (review.kind === 'ConversionReview') {
    const objects = review.request.objects;
    const first = objects[0] as KubeObject | undefined;
    const named = objectName(first);
    const what = first
      ? `${first.kind ?? 'object'}${named ? ` ${named}` : ''} (${first.apiVersion ?? 'no apiVersion'})`
      : '';
    return (
      `the ConversionReview of ${objects.length} object${objects.length === 1 ? '' : 's'}` +
      `${what ? `, the first ${what},` : ''} to ${review.request.desiredAPIVersion}`
    );
  }
  const request = review.request;
  const named = objectName(request.object ?? request.oldObject);
  return `the AdmissionReview ${request.uid}: ${describeRequest(request)}${named ? `, object ${named}` : ''}`;
}

/** What the API server does with the request when the function fails, by failurePolicy. */
function consequence(registration: Registration): string {
  if (registration.type === 'conversion')
    return 'the API server fails the conversion, and every read or write of the object with it';
  return registration.failurePolicy === 'Ignore'
    ? 'failurePolicy is Ignore: the API server admits the request unchecked' +
        (registration.type === 'mutating' ? ' and unmutated' : '')
    : 'failurePolicy is Fail: the API server refuses every such request';
}

/**
 * The AssertionError message for a function that failed on a review when the test did not
 * expect it: the function, the review, the error, the line of the user's code it came from,
 * what the API server then does, and the fix.
 */
export function failureMessage(
  registration: Registration,
  review: AdmissionReview | ConversionReview,
  answer: Answer,
  failure: FunctionFailure,
): string {
  const what =
    failure.kind === 'timeout'
      ? 'did not answer in time'
      : failure.error.startsWith('UserFunctionError:')
        ? 'gave an answer the adapter refused'
        : 'threw';
  const converting = registration.type === 'conversion' && answer.message ? ` (${answer.message})` : '';
  const at = failure.at ? `\n    at ${failure.at}` : '';
  return (
    `${registration.name}: the function ${what} on ${describeReview(review)}${converting}:\n` +
    `    ${failure.error}${at}\n` +
    `${consequence(registration)}. Fix the function; a test that means it to fail passes ` +
    '{ expectFailure: true } to invoke and reads result.failure'
  );
}

/** The AssertionError message when a test expected the function to fail and it answered. */
export function unexpectedAnswer(
  registration: Registration,
  review: AdmissionReview | ConversionReview,
  answer: Answer,
): string {
  const said =
    registration.type === 'conversion'
      ? `a conversion that ${answer.message ? `failed as it meant to: ${answer.message}` : 'succeeded'}`
      : answer.allowed
        ? `allowed${answer.patch?.length ? ' with a patch' : ''}`
        : `denied: ${JSON.stringify(answer.status)}`;
  return (
    `${registration.name}: expectFailure was set, but the function answered ${describeReview(review)} ` +
    `without failing (${said}); drop expectFailure, or send a review it fails on`
  );
}
