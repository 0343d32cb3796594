/**
 * A webhook as the engines define it: a registration and an engine put together with the
 * handler (lib/handler/stages.ts), and the context a user function is given.
 */
import { createHandler } from './handler/stages.ts';
import type { HandlerOptions, ReviewEngine, RunContext, WebhookContext, WebhookHandler } from './handler/types.ts';
import type { Registration } from './registration.ts';

export { isInstance, logFailure, newErrorId } from './handler/failure.ts';
export { createHandler, resultBytes } from './handler/stages.ts';
export type {
  Caller,
  CallerIdentity,
  EngineAnswer,
  HandlerOptions,
  LambdaContextLike,
  ReviewEngine,
  RunContext,
  UnsendableAnswer,
  WebhookContext,
  WebhookHandler,
} from './handler/types.ts';

/** A defined webhook: the Lambda handler, the registration infra reads, and a way to rebuild the handler. */
export interface DefinedWebhook<R extends Registration> {
  handler: WebhookHandler;
  registration: R;
  /** Builds a handler with other options (a test logger, a smaller body limit). */
  withOptions(options: HandlerOptions): WebhookHandler;
}

/** Puts a registration and its engine together as a defined webhook. */
export function defineWebhook<R extends Registration, V>(registration: R, engine: ReviewEngine<V>): DefinedWebhook<R> {
  return {
    handler: createHandler(registration, engine),
    registration,
    withOptions: (options) => createHandler(registration, engine, options),
  };
}

/** Builds the WebhookContext handed to user functions, from the caller; `ctx.warn` calls `warn`. */
export function userContext(ctx: RunContext, warn: (message: string) => void): WebhookContext {
  const user: WebhookContext = {
    requestId: ctx.requestId,
    remainingMs: () => Math.max(0, ctx.budgetMs - (ctx.now() - ctx.startedAt)),
    log: ctx.log,
    warn: (message) => {
      warn(message);
    },
  };
  const { cluster, kubeVersion, enforcement } = ctx.caller;
  if (cluster !== undefined) {
    user.cluster = cluster;
    if (kubeVersion !== undefined) user.kubeVersion = kubeVersion;
    if (enforcement !== undefined) user.enforcement = enforcement;
  }
  return user;
}
