import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { lintFiles } from '../../infra/lint.ts';
import { validateWebhookUrl } from '../../lib/k8s/url.ts';
import { FIXTURE_FUNCTIONS, runKlw } from '../helpers.ts';

// A copy inside the repository, so `kube-lambda-webhooks` resolves to this package.
const work = mkdtempSync(join(process.cwd(), '.klw-test-'));
after(() => rmSync(work, { recursive: true, force: true }));
cpSync(FIXTURE_FUNCTIONS, join(work, 'functions'), { recursive: true });

/** Runs klw in the copy; its exit code and what it wrote to stderr. */
const klw = (...args: string[]) => runKlw('--root', work, ...args);

/** Every clientConfig.url of the documents in a manifest file. */
function urlsIn(file: string): string[] {
  const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((d) => d.toJS() as Record<string, any>);
  return docs.flatMap((d) => [
    ...(d.webhooks ?? []).map((w: any) => w.clientConfig.url as string),
    ...(d.spec?.conversion?.webhook ? [d.spec.conversion.webhook.clientConfig.url as string] : []),
  ]);
}

describe('klw manifests without a path secret', () => {
  it('writes URLs the API server refuses at apply, showing --path-secret, and says so', async () => {
    const out = join(work, 'placeholder.yaml');
    const { code, stderr } = await klw('manifests', '--base-url', 'https://h.example.com', '--out', out);
    assert.equal(code, 0, stderr);
    const urls = urlsIn(out);
    assert.equal(urls.length, 3, 'a URL per function');
    for (const url of urls) {
      // The API server's URL rules (ValidateWebhookURL): what `kubectl apply` answers, with the URL in it.
      assert.deepEqual(
        validateWebhookUrl(url).map((p) => p.replace(/, got .*/, '')),
        ['query parameters are not permitted'],
        url,
      );
      assert.match(url, /\/__KLW_PATH_SECRET__\?write-the-secret-with=klw-manifests--path-secret$/);
    }
    assert.match(
      stderr,
      /refuses until it is replaced by the secret; --path-secret ssm --stage <stage> \(deployed\) or --path-secret local/,
    );
  });

  it('is a lint error naming the fix, where the secret written with --path-secret local passes', async () => {
    const placeholder = join(work, 'placeholder.yaml');
    await klw('manifests', '--base-url', 'https://h.example.com', '--out', placeholder);
    const findings = lintFiles([placeholder]).filter((f) => f.level === 'error');
    assert.equal(findings.length, 3);
    for (const f of findings) {
      assert.equal(f.rule, 'path-secret-placeholder');
      assert.match(
        f.message,
        /clientConfig\.url holds the path secret placeholder.*klw manifests --path-secret ssm --stage <stage>/,
      );
    }
    const local = join(work, 'local.yaml');
    assert.equal(
      (
        await klw(
          'manifests',
          '--base-url',
          'https://h.example.com',
          '--path-secret',
          'local',
          '--state-dir',
          join(work, 'state'),
          '--out',
          local,
        )
      ).code,
      0,
    );
    assert.deepEqual(
      lintFiles([local]).filter((f) => f.level === 'error'),
      [],
    );
    for (const url of urlsIn(local)) assert.deepEqual(validateWebhookUrl(url), []);
  });
});

describe('a conversion function without crdManifest', () => {
  const index = join(work, 'functions', 'crontab-conversion', 'index.ts');
  const original = readFileSync(index, 'utf8');
  const withoutManifest = () => writeFileSync(index, original.replace(/^\s*crdManifest: .*\n/m, ''));
  after(() => writeFileSync(index, original));
  const fix =
    /functions\/crontab-conversion: the registration has no crdManifest, .*set crdManifest: 'functions\/crontab-conversion\/crd\.yaml'/;

  it('fails klw manifests, naming the function, the field and the fix', async () => {
    withoutManifest();
    const { code, stderr } = await klw('manifests', '--base-url', 'https://h.example.com', '--path-secret', 'none');
    assert.equal(code, 1);
    assert.match(stderr, fix);
  });

  it('passes klw manifests --crd-patches, which writes the patch for a CRD installed otherwise', async () => {
    withoutManifest();
    const dir = join(work, 'patches');
    const { code, stderr } = await klw(
      'manifests',
      '--base-url',
      'https://h.example.com',
      '--path-secret',
      'none',
      '--out',
      join(work, 'm.yaml'),
      '--crd-patches',
      dir,
    );
    assert.equal(code, 0, stderr);
    assert.match(readFileSync(join(dir, 'crontabs.example.com.conversion-patch.yaml'), 'utf8'), /strategy: Webhook/);
  });

  it('writes the placeholder into the patch only as a URL the API server refuses, and says so', async () => {
    withoutManifest();
    // Only the conversion function: the patch is the one file holding a URL.
    const aside = join(work, 'aside');
    for (const name of ['pod-policy', 'pod-defaults'])
      cpSync(join(work, 'functions', name), join(aside, name), { recursive: true });
    for (const name of ['pod-policy', 'pod-defaults']) rmSync(join(work, 'functions', name), { recursive: true });
    try {
      const dir = join(work, 'patches-placeholder');
      const { code, stderr } = await klw(
        'manifests',
        '--base-url',
        'https://h.example.com',
        '--out',
        join(work, 'm.yaml'),
        '--crd-patches',
        dir,
      );
      assert.equal(code, 0, stderr);
      const [url] = urlsIn(join(dir, 'crontabs.example.com.conversion-patch.yaml'));
      assert.deepEqual(
        validateWebhookUrl(url!).map((p) => p.replace(/, got .*/, '')),
        ['query parameters are not permitted'],
        url,
      );
      assert.match(
        stderr,
        /holds the placeholder __KLW_PATH_SECRET__.*--path-secret local \(emulator\) writes the secret/,
      );
    } finally {
      for (const name of ['pod-policy', 'pod-defaults'])
        cpSync(join(aside, name), join(work, 'functions', name), { recursive: true });
      rmSync(aside, { recursive: true, force: true });
    }
  });

  it('is a lint error', async () => {
    withoutManifest();
    const { code, stderr } = await klw('lint');
    assert.equal(code, 1);
    assert.match(stderr, /^error conversion-crd-unknown crontab-conversion: /m);
    assert.match(stderr, fix);
    writeFileSync(index, original);
    assert.equal((await klw('lint')).code, 0);
  });
});
