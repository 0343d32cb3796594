// What an e2e file does with its API servers' folders: removed when every test passed, kept (and
// said where) when one failed, so their logs can be read.
import { rmSync } from 'node:fs';
import { it } from 'node:test';

/** The failures of one e2e file and the API server folders they keep. */
export class KeptLogs {
  private failed = false;

  /** `it`, marking the file failed when the test throws. */
  readonly check = (name: string, fn: () => Promise<void> | void): void => {
    it(name, async () => {
      try {
        await fn();
      } catch (err) {
        this.failed = true;
        throw err;
      }
    });
  };

  /** Removes the folders when no test failed; else says where their logs are kept. */
  cleanUp(...dirs: string[]): void {
    for (const dir of dirs) {
      if (!this.failed) rmSync(dir, { recursive: true, force: true });
      else process.stdout.write(`API server logs kept in ${dir}\n`);
    }
  }
}
