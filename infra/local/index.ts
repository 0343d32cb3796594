// The local emulator: the HTTPS API (api.ts), the Lambda Invoke API (lambda-api.ts), one-off
// invocations (invoke.ts), sample reviews (sample.ts), registering with a cluster (apply.ts),
// and what they share. The rest of klw imports the emulator from here.
export * from './api.ts';
export * from './apply.ts';
export * from './certs.ts';
export * from './back/invoke.ts';
export * from './lambda-api.ts';
export * from './output.ts';
export * from './back/project.ts';
export * from './sample.ts';
export * from './serve.ts';
