import { join, resolve } from 'node:path';
import { stringify } from 'yaml';
import { makeDir, writeFileSafely } from './files.ts';
import { KlwError } from './errors.ts';

/** The files `klw auth-config` writes. */
export interface AuthConfigFiles {
  admissionConfig: string;
  kubeconfig: string;
}

/**
 * The kubeconfig user name the API server looks up for a webhook URL: the URL's host,
 * with the port when the URL names one (as the admission webhook documentation explains).
 */
export function credentialName(url: string): string {
  const parsed = new URL(url);
  return parsed.port
    ? `${parsed.hostname.includes(':') ? `[${parsed.hostname.replace(/^\[|\]$/g, '')}]` : parsed.hostname}:${parsed.port}`
    : parsed.hostname;
}

/**
 * Writes the API server's AdmissionConfiguration (for --admission-control-config-file) and
 * the kubeconfig it names, so the API server sends `Authorization: Bearer <token>` to the
 * webhook host. Both are written 0600 (the kubeconfig holds the token), replacing the old ones
 * atomically; a symbolic link at either path is refused.
 */
export function writeAuthConfig(outDir: string, webhookUrl: string, token: string): AuthConfigFiles {
  if (!token.trim()) throw new KlwError('the token is empty');
  const dir = resolve(outDir);
  makeDir(dir, { secret: true });
  const kubeconfig = join(dir, 'webhook-kubeconfig.yaml');
  const admissionConfig = join(dir, 'admission-config.yaml');
  writeFileSafely(
    kubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      users: [{ name: credentialName(webhookUrl), user: { token: token.trim() } }],
    }),
    { secret: true },
  );
  const webhookAdmission = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'WebhookAdmissionConfiguration',
    kubeConfigFile: kubeconfig,
  };
  writeFileSafely(
    admissionConfig,
    stringify({
      apiVersion: 'apiserver.config.k8s.io/v1',
      kind: 'AdmissionConfiguration',
      plugins: [
        { name: 'ValidatingAdmissionWebhook', configuration: webhookAdmission },
        { name: 'MutatingAdmissionWebhook', configuration: webhookAdmission },
      ],
    }),
    { secret: true },
  );
  return { admissionConfig, kubeconfig };
}
