/**
 * matchConditions in the emulator: an API server that does not know them (before 1.28) sends
 * every review its rules match, so start-api evaluates them as a newer API server would and
 * answers a review they exclude itself, without invoking the function.
 */
import { answerWithoutCalling, skipReason } from '../../lib/matchconditions/matcher.ts';
import type { Registration } from '../../lib/registration.ts';
import { completeAdmissionReview, parseAdmissionReview } from '../../lib/review/envelope.ts';
import type { HttpResponse } from './results.ts';

/**
 * The emulator's answer to a request body when the function's matchConditions exclude the
 * review (allowed) or fail under failurePolicy Fail (denied with the API server's message);
 * undefined when the function is to be invoked, or the body is no review (the function
 * answers that with its own 400).
 */
export function answerByMatchConditions(registration: Registration | undefined, body: Buffer, log: (line: string) => void): HttpResponse | undefined {
  if (!registration || registration.type === 'conversion' || !registration.matchConditions?.length) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
  const parsed = parseAdmissionReview(json);
  if (!parsed.ok) return undefined;
  const notCalled = answerWithoutCalling(registration, parsed.review.request);
  if (!notCalled) return undefined;
  const reason = 'matched' in notCalled.outcome ? skipReason(notCalled.outcome) : `rejected: ${notCalled.response.status!.message}`;
  log(JSON.stringify({ msg: 'not invoked: matchConditions', function: registration.name, uid: parsed.review.request.uid, reason }));
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(JSON.stringify(completeAdmissionReview(parsed.review, notCalled.response))),
  };
}
