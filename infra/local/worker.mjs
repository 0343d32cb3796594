// One Lambda execution environment: loads a function bundle once (the init phase of a cold
// start), then runs one invocation at a time for the emulator's pool.
import { parentPort, workerData } from 'node:worker_threads';

const { bundleUrl, functionName, memoryMb } = workerData;
const initStarted = performance.now();
let handler;
let initError;
try {
  const mod = await import(bundleUrl);
  handler = mod.handler;
  if (typeof handler !== 'function') throw new TypeError(`${bundleUrl} exports no handler function`);
} catch (err) {
  initError = err;
}
const initMs = performance.now() - initStarted;

function describeError(err) {
  const e = err instanceof Error ? err : new Error(String(err));
  return { errorType: e.name || 'Error', errorMessage: e.message, stackTrace: String(e.stack ?? '').split('\n').slice(1).map((l) => l.trim()) };
}

parentPort.on('message', async ({ id, event, requestId, deadline }) => {
  if (initError) {
    parentPort.postMessage({ id, ok: false, error: { ...describeError(initError), errorType: 'Runtime.ImportModuleError' }, initMs });
    return;
  }
  const context = {
    awsRequestId: requestId,
    functionName,
    functionVersion: '$LATEST',
    memoryLimitInMB: String(memoryMb),
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    logGroupName: `/aws/lambda/${functionName}`,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    const result = await handler(event, context);
    parentPort.postMessage({ id, ok: true, result, initMs });
  } catch (err) {
    parentPort.postMessage({ id, ok: false, error: describeError(err), initMs });
  }
});
parentPort.postMessage({ ready: true, initMs });
