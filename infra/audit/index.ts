// `klw audit`: the existing objects of a cluster, read through its API (kubeapi.ts, kubeconfig.ts,
// limits.ts), run through the admission functions locally and the policies as the API server
// evaluates them (audit.ts, policies.ts, discovery.ts, access.ts) and
// reported (report.ts, openreports.ts). The rest of klw imports the audit from here.
export * from './audit.ts';
export * from './discovery.ts';
export * from './kubeapi.ts';
export * from './kubeconfig.ts';
export * from './limits.ts';
export * from './openreports.ts';
export * from './policies.ts';
export * from './report.ts';
