// `klw audit`: the existing objects of a cluster, read through its API (kubeapi.ts), run through
// the admission functions locally (audit.ts). The rest of klw imports the audit from here.
export * from './audit.ts';
export * from './kubeapi.ts';
