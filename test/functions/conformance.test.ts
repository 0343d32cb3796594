// Every function in functions/ gets the test kit's conformance checks, whatever its name or kind.
import { describeConformance } from 'kube-lambda-webhooks/testing';

// Not awaited, so the file runs as CommonJS too (a "type": "commonjs" project has no top-level
// await): node:test runs the checks registered once the functions are loaded, and fails the file
// if loading them throws.
void describeConformance();
