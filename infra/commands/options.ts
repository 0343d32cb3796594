// Options several commands take, each made in one place: the flag, its default and its value's
// type. Their help differs where the option means something narrower to a command, so each
// takes its help text (the common one by default).
import { Option } from 'commander';
import { NODE_OPTION_HELP } from '../node-binary.ts';
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
