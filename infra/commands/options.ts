// Options several commands take, each made in one place: the flag, its default and its value's
// type. Their help differs where the option means something narrower to a command, so each
// takes its help text (the common one by default). The program imports this module to list the
// commands' options, before any command runs: what it imports is loaded by every klw command, so
// the constants of heavier modules are restated here (a test keeps each equal to its source).
import { Option } from 'commander';
import type { EventSource } from '../../lib/internal.ts';
import { REGION_HELP } from '../region.ts';

/** The stage of the Serverless service. */
export interface StageOptions {
  stage: string;
}

/** The AWS region; unset means serverless.yml's, then the environment's. */
export interface RegionOptions {
  region?: string;
}

/** The local state directory (path secret, certificates, manifests of the emulator). */
export interface StateDirOptions {
  stateDir: string;
}

/** The Kubernetes version (and feature gates) of the target API server. */
export interface KubeTargetOptions {
  kubeVersion?: string;
  featureGates?: string;
}

/** The kubeconfig to reach a cluster with. */
export interface KubeconfigOptions {
  kubeconfig?: string;
}

/** A file of environment variables for the functions (SAM format). */
export interface EnvVarsOptions {
  envVars?: string;
}

/** `--stage <stage>`, default dev. */
export function stageOption(help = 'Serverless stage'): Option {
  return new Option('--stage <stage>', help).default('dev');
}

/** `--region <region>`, no default (serverless.yml's, else the environment's). */
export function regionOption(help = REGION_HELP): Option {
  return new Option('--region <region>', help);
}

/** The fleet file at the project's root: fleet/file.ts's FLEET_FILE, restated (that module loads the library). */
export const FLEET_FILE = 'clusters.yaml';

/** The default `--name` of the webhook configurations: manifests.ts's DEFAULT_CONFIGURATION_NAME, restated. */
export const DEFAULT_CONFIGURATION_NAME = 'kube-lambda-webhooks';

/**
 * The event sources `--event-format` takes, the default first, with what each one is: the
 * library's SOURCE_TOOLS (sourceNames, describeSources), restated (the library is not loaded).
 */
export const EVENT_SOURCES: ReadonlyArray<readonly [EventSource, string]> = [
  ['http', 'API Gateway HTTP API (payload format 2.0)'],
  ['rest', 'API Gateway REST API (payload format 1.0)'],
  ['url', 'Lambda function URL'],
  ['alb', 'Application Load Balancer target group'],
];

/** The names `--event-format` takes, the default first. */
export function eventSourceNames(): EventSource[] {
  return EVENT_SOURCES.map(([name]) => name);
}

/** `http (API Gateway HTTP API ...), rest (...)`: the names with what each one is, for help texts. */
export function describeEventSources(): string {
  return EVENT_SOURCES.map(([name, what]) => `${name} (${what})`).join(', ');
}

/** The environment variable naming where function builds are kept: build-kept.ts's KEPT_BUILDS_ENV, restated (that module loads esbuild). */
export const KEPT_BUILDS_ENV = 'KLW_KEPT_BUILDS';

/** `klw audit`'s exit code when the audit did not run or is incomplete: audit/'s AUDIT_INCOMPLETE, restated. */
export const AUDIT_INCOMPLETE = 2;

/** The default `--page-size` of `klw audit`: audit/'s DEFAULT_PAGE_SIZE, restated. */
export const DEFAULT_PAGE_SIZE = 500;

/** The help of `--node`: node-binary.ts's NODE_OPTION_HELP, restated (that module loads yaml and the downloader). */
export const NODE_OPTION_HELP =
  'run on this Node major (24, or "runtime": that of the Lambda runtime), ' +
  'installed from the npm registry into the cache';

/**
 * The default of `--state-dir`: secrets/'s DEFAULT_STATE_DIR, restated because importing that
 * module would load the AWS SDK and the library into every command (a test keeps the two equal).
 */
export const STATE_DIR_DEFAULT = '.klw/local';

/** `--state-dir <dir>`, default .klw/local. */
export function stateDirOption(help: string): Option {
  return new Option('--state-dir <dir>', help).default(STATE_DIR_DEFAULT);
}

/** `--kube-version <X.Y>`. */
export function kubeVersionOption(help: string): Option {
  return new Option('--kube-version <X.Y>', help);
}

/** `--feature-gates <gates>`, as kube-apiserver takes them. */
export function featureGatesOption(help: string): Option {
  return new Option('--feature-gates <gates>', help);
}

/** `--kubeconfig <file>`. */
export function kubeconfigOption(help: string): Option {
  return new Option('--kubeconfig <file>', help);
}

/** `--env-vars <file>`, SAM format. */
export function envVarsOption(): Option {
  return new Option(
    '--env-vars <file>',
    'environment variables, SAM format: {"Parameters": {...}, "<function>": {...}}',
  );
}

/** `--node <major>`: the command runs again on that Node (see applyNodeOption). */
export function nodeOption(): Option {
  return new Option('--node <major>', NODE_OPTION_HELP);
}
