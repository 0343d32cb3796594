/** The lifecycle events the plugin hooks. */
export declare const HOOKS: string[];
/** The Serverless Framework plugin `kube-lambda-webhooks/serverless`. */
export default class KubeLambdaWebhooks {
  constructor(serverless: unknown, options?: unknown, utils?: unknown);
  hooks: Record<string, () => Promise<void>>;
  asyncInit(): Promise<void>;
}
