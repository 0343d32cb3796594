// Scratch projects for tests that load or build functions: made inside the repository, so that
// `kube-lambda-webhooks` resolves to this package, and removed when the test file ends.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after } from 'node:test';

/** A validating function named `webhook` that loads and registers as it should. */
export const GOOD_WEBHOOK = (webhook: string) =>
  "import { allow, defineValidatingWebhook, on, Pod } from 'kube-lambda-webhooks';\n" +
  `export default defineValidatingWebhook({ name: '${webhook}', rules: [on(Pod).create()], validate: () => allow() });\n`;

/**
 * A maker of projects whose functions/<name>/index.ts hold the given code, each removed after the
 * calling test file's tests (call it at the file's top level).
 */
export function scratchProjects(): (functions: Record<string, string>) => string {
  const made: string[] = [];
  after(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  return (functions) => {
    const root = mkdtempSync(join(process.cwd(), '.klw-test-'));
    made.push(root);
    for (const [name, code] of Object.entries(functions)) {
      mkdirSync(join(root, 'functions', name), { recursive: true });
      writeFileSync(join(root, 'functions', name, 'index.ts'), code);
    }
    return root;
  };
}
