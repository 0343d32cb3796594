// One Lambda execution environment: loads a function bundle once (the init phase of a cold
// start), then runs invocations one at a time, in the order the pool sent them.
import { parentPort, workerData } from 'node:worker_threads';

const { bundleUrl, functionName, memoryMb } = workerData;
let handler;
let initError;
try {
  const mod = await import(bundleUrl);
  handler = mod.handler;
  if (typeof handler !== 'function') throw new TypeError(`${bundleUrl} exports no handler function`);
} catch (err) {
  initError = err;
}

function describeError(err) {
  const e = err instanceof Error ? err : new Error(String(err));
  return { errorType: e.name || 'Error', errorMessage: e.message, stackTrace: String(e.stack ?? '').split('\n').slice(1).map((l) => l.trim()) };
}

async function run({ id, event, requestId, timeoutMs }) {
  if (initError) {
    parentPort.postMessage({ id, ok: false, error: { ...describeError(initError), errorType: 'Runtime.ImportModuleError' } });
    return;
  }
  // The clock starts when this invocation starts, not when it was queued.
  const deadline = Date.now() + timeoutMs;
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
    parentPort.postMessage({ id, ok: true, result });
  } catch (err) {
    parentPort.postMessage({ id, ok: false, error: describeError(err) });
  }
}

const queue = [];
let running = false;
async function drain() {
  running = true;
  while (queue.length) await run(queue.shift());
  running = false;
}
parentPort.on('message', (message) => {
  queue.push(message);
  if (!running) void drain();
});
