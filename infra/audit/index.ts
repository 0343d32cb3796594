// `klw audit`: the existing objects of a cluster, read through its API (kubeapi.ts, kubeconfig.ts,
// limits.ts), run through the admission functions locally (audit.ts, discovery.ts, access.ts) and
// reported (report.ts). The rest of klw imports the audit from here.
export * from './audit.ts';
export * from './discovery.ts';
export * from './kubeapi.ts';
export * from './kubeconfig.ts';
export * from './limits.ts';
export * from './report.ts';
