// Every function in functions/ gets the test kit's conformance checks, whatever its name or kind.
import { describeConformance } from 'kube-lambda-webhooks/testing';

await describeConformance();
