import type { LambdaClient } from '@aws-sdk/client-lambda';
import { awsError } from '../aws-errors.ts';
import type { Registration, AdmissionReview, ConversionReview, KubeObject } from '../../lib/internal.ts';
import { toEvent } from '../../lib/harness/events.ts';
import { readAnswer } from '../../lib/harness/invoke.ts';
import { admissionReview, conversionReview } from '../../lib/harness/reviews.ts';
import { usesPathSecret } from '../secrets/index.ts';

/** The outcome of smoke-testing one function. */
export interface SmokeResult {
  name: string;
  ok: boolean;
  detail: string;
  durationMs: number;
}

/** A sample object for an admission registration's first rule (a kind guessed from the resource). */
export function sampleObject(reg: Registration): KubeObject {
  const rule = reg.type === 'conversion' ? undefined : reg.rules[0];
  const group = rule?.apiGroups.find((g) => g !== '*') ?? '';
  const version = rule?.apiVersions.find((v) => v !== '*') ?? 'v1';
  const resource = (rule?.resources.find((r) => !r.includes('*')) ?? 'configmaps').split('/')[0]!;
  const singular = resource.endsWith('ies') ? `${resource.slice(0, -3)}y` : resource.replace(/s$/, '');
  const kind = singular.charAt(0).toUpperCase() + singular.slice(1);
  return {
    apiVersion: group ? `${group}/${version}` : version,
    kind,
    metadata: { name: 'klw-smoke', namespace: 'default' },
  };
}

/** The review a smoke test sends: a CREATE of the sample object, or an empty ConversionReview. */
export function sampleReview(reg: Registration): AdmissionReview | ConversionReview {
  if (reg.type === 'conversion') return conversionReview([], `${reg.crd.split('.').slice(1).join('.')}/v1`);
  const object = sampleObject(reg);
  const rule = reg.rules[0];
  return admissionReview(object, {
    resource: rule?.resources.find((r) => !r.includes('*'))?.split('/')[0] ?? 'configmaps',
  });
}

/**
 * Invokes every function through the Lambda Invoke API with a sample review in an HTTP API
 * event (its path carrying `pathSecret` when given) and checks the answer by the API
 * server's rules, before anything is registered.
 */
export async function smoke(
  client: LambdaClient,
  registrations: Registration[],
  functionName: (name: string) => string,
  onResult: (r: SmokeResult) => void = () => {},
  pathSecret?: string,
): Promise<SmokeResult[]> {
  // Loaded here, not with the module: the commands that import deploy/ only to read serverless.yml never load it.
  const { InvokeCommand } = await import('@aws-sdk/client-lambda');
  const results: SmokeResult[] = [];
  for (const reg of registrations) {
    const started = performance.now();
    let result: SmokeResult;
    try {
      const review = sampleReview(reg);
      // The path secret rides in the path, as in the registered URL.
      const path = pathSecret && usesPathSecret(reg) ? `${reg.path}/${pathSecret}` : reg.path;
      const event = toEvent(review, { path, timeout: `${reg.timeoutSeconds}s` });
      const body = Buffer.from(JSON.stringify(event));
      const invoke = new InvokeCommand({ FunctionName: functionName(reg.name), Payload: body });
      const out = await client.send(invoke).catch(async (err: unknown) => {
        const region = await Promise.resolve(client.config.region()).catch(() => 'an unknown region');
        throw awsError(err, { action: `invoking ${functionName(reg.name)}`, region });
      });
      const payload = out.Payload ? Buffer.from(out.Payload).toString('utf8') : 'null';
      if (out.FunctionError) throw new Error(`function error: ${payload}`);
      const http = JSON.parse(payload) as { statusCode: number; body: string };
      const answer = readAnswer(reg.type as never, review as never, http) as { allowed?: boolean; status?: unknown };
      const detail =
        'allowed' in answer
          ? answer.allowed
            ? 'allowed'
            : `denied (${JSON.stringify(answer.status)})`
          : `conversion ${(answer as { status: string }).status}`;
      result = { name: reg.name, ok: true, detail, durationMs: performance.now() - started };
    } catch (err) {
      result = {
        name: reg.name,
        ok: false,
        detail: (err as Error).message.split('\n')[0]!,
        durationMs: performance.now() - started,
      };
    }
    onResult(result);
    results.push(result);
  }
  return results;
}
