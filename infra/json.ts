/**
 * A parsed JSON or YAML document (a manifest, a kubeconfig, serverless.yml, an API server's
 * answer) read by property paths. It is loose on purpose: the readers check the values they use
 * (`typeof`, `Array.isArray`) where a wrong shape matters, and a typed schema per document would
 * duplicate the Kubernetes and serverless ones. New code should prefer `unknown` and narrowing.
 */
// biome-ignore lint/suspicious/noExplicitAny: the one loose document type, shared by the readers above.
export type Json = Record<string, any>;
