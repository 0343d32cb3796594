// The path secret in the functions' URLs: its names, local file and SSM parameter. What the
// commands do with it (write it into manifests, rotate, retire) is infra/secret-actions.ts, which
// builds on this folder: the folder stays a leaf that manifests and lint can use.
export * from './secrets.ts';
