// One Lambda execution environment, run as a child process of the emulator (so the
// function's memory size can be enforced on everything it allocates): loads a function
// bundle once (the init phase of a cold start), then runs invocations one at a time, in
// the order the pool sent them.
// deferInit (under a debugger): the bundle is loaded at the first invocation, not at start, so
// a debugger attached to the waiting worker sees the init phase too.
const { bundleUrl, functionName, memoryMb, region, deferInit } = JSON.parse(process.argv[2] ?? '{}');
// The emulator went away: an execution environment has nothing left to serve.
process.on('disconnect', () => process.exit(0));

let handler;
let initError;
// Messages may arrive while the bundle loads: the listener is there from the start, and
// every invocation waits for the init phase.
const load = async () => {
  try {
    const mod = await import(bundleUrl);
    handler = mod.handler;
    if (typeof handler !== 'function') throw new TypeError(`${bundleUrl} exports no handler function`);
  } catch (err) {
    initError = err;
  }
};
let init = deferInit ? undefined : load();

function describeError(err) {
  const e = err instanceof Error ? err : new Error(String(err));
  return {
    errorType: e.name || 'Error',
    errorMessage: e.message,
    stackTrace: String(e.stack ?? '')
      .split('\n')
      .slice(1)
      .map((l) => l.trim()),
  };
}

function send(message) {
  try {
    process.send(message);
  } catch (err) {
    // A result the channel cannot carry (a function, a symbol) is the function's error.
    process.send({ id: message.id, ok: false, error: describeError(err) });
  }
}

async function run({ id, event, requestId, timeoutMs }) {
  if (initError) {
    send({ id, ok: false, error: { ...describeError(initError), errorType: 'Runtime.ImportModuleError' } });
    return;
  }
  // The clock starts when this invocation starts, not when it was queued.
  const deadline = Date.now() + timeoutMs;
  const context = {
    awsRequestId: requestId,
    functionName,
    functionVersion: '$LATEST',
    memoryLimitInMB: String(memoryMb),
    invokedFunctionArn: `arn:aws:lambda:${region}:123456789012:function:${functionName}`,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: process.env.AWS_LAMBDA_LOG_STREAM_NAME,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
  try {
    const result = await handler(event, context);
    send({ id, ok: true, result });
  } catch (err) {
    send({ id, ok: false, error: describeError(err) });
  }
}

const queue = [];
let running = false;
async function drain() {
  running = true;
  await (init ??= load());
  while (queue.length) await run(queue.shift());
  running = false;
}
process.on('message', (message) => {
  queue.push(message);
  if (!running) void drain();
});
