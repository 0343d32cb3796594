// The tests of lib/ (test/lib), in one process: see test/group.ts. `npm test` leaves test/lib out
// of its own search and runs this file instead.
import { runGroup } from '../group.ts';

await runGroup(['test/lib']);
