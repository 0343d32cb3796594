// The path secret in the functions' URLs: its names, local file and SSM parameter. What the
// commands do with it (write it into manifests, rotate, retire) is in actions.ts, which the
// commands import directly: this entry stays a leaf that manifests and lint can use.
export * from './secrets.ts';
