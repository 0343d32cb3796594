// The tests of the CEL engine (packages/kube-cel/src and test/cel), in one process: see
// test/group.ts. `npm test` leaves those folders out of its own search and runs this file instead.
import { runGroup } from '../group.ts';

await runGroup(['packages/kube-cel/src', 'test/cel']);
