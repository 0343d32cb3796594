// The tests of lib/ (test/lib), in one process: see test/group.ts. `npm test` leaves test/lib out
// of its own search and runs this file instead.
// klw-test: own-process (a group of its own: klw test --group does not nest groups)
import { runGroup } from '../group.ts';

/** A file's name under test/lib without `.test.ts`: the pattern's variable part. */
const under = (file: string) => file.slice('test/lib/'.length, -'.test.ts'.length);

await runGroup(['test/lib'], (file) => import(`../lib/${under(file)}.test.ts`));
