// The tests of the CEL engine (packages/kube-cel/src and test/cel), in one process: see
// test/group.ts. `npm test` leaves those folders out of its own search and runs this file instead.
// klw-test: own-process (a group of its own: klw test --group does not nest groups)
import { runGroup } from '../group.ts';

/** A file's name under `dir` without `.test.ts`: a pattern's variable part. */
const under = (dir: string, file: string) => file.slice(dir.length + 1, -'.test.ts'.length);

await runGroup(['packages/kube-cel/src', 'test/cel'], (file) =>
  file.startsWith('test/cel/')
    ? import(`../cel/${under('test/cel', file)}.test.ts`)
    : import(`../../packages/kube-cel/src/${under('packages/kube-cel/src', file)}.test.ts`),
);
