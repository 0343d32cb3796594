import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { allow, defineValidatingWebhook, deny, patched } from '../../../lib/index.ts';
import { sanitizeWarnings } from '../../../lib/admission/decision.ts';
import {
  recordWarnings,
  WarningList,
  WARNING_ITEM_LIMIT,
  WARNINGS_TOTAL_LIMIT,
} from '../../../lib/admission/decision.ts';
import type { Decision } from '../../../lib/admission/decision.ts';
import { wouldDenyWarning } from '../../../lib/admission/enforcement.ts';
import { DeadlineExceeded, withDeadline } from '../../../lib/deadline.ts';
import { admissionReview, readAnswer } from '../../../lib/testing/index.ts';
import { invokeRaw } from '../../../lib/harness/invoke.ts';
import { podPolicy, type Pod } from '../../fixtures/functions.ts';
import { binaryString } from '../../arbitraries.ts';
import { captureLogger, FUZZ_RUNS, PATIENCE_MS } from '../../helpers.ts';

/**
 * The API server's recorder (k8s.io/apiserver endpoints/filters/warning.go, `AddWarning`)
 * written as plainly as possible: a list for repeats, an array of code points per text.
 */
function referenceRecorder(warnings: string[], total: number, item: number): string[] {
  const recorded: string[] = [];
  const ordered: string[] = [];
  let headers: string[] = [];
  let written = 0;
  let truncating = false;
  const valid = (text: string) => ![...text].some((c) => /[\u0000-\u001f\u007f-\u009f]/.test(c));
  for (const raw of warnings) {
    if (raw === '') continue;
    if (written >= total && truncating) continue;
    const text = [...raw].map((c) => (c.length === 1 && c >= '\ud800' && c <= '\udfff' ? '\ufffd' : c)).join('');
    if (recorded.includes(text)) continue;
    recorded.push(text);
    ordered.push(text);
    let runes = [...text];
    if (truncating && runes.length > item) runes = runes.slice(0, item);
    if (!valid(runes.join(''))) continue;
    if (written + runes.length <= total || truncating) {
      written += runes.length;
      headers.push(runes.join(''));
      continue;
    }
    truncating = true;
    written = 0;
    headers = [];
    for (const w of ordered) {
      const cut = [...w].slice(0, item);
      if (valid(cut.join(''))) {
        written += cut.length;
        headers.push(cut.join(''));
      }
    }
  }
  return headers;
}

/** A pod with `count` containers whose images have no tag. */
function untaggedPod(count: number): Pod {
  const containers = Array.from({ length: count }, (_, i) => ({ name: `c${i}`, image: 'nginx' }));
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'many', namespace: 'default' }, spec: { containers } };
}

describe('warnings on a pod with 150,000 containers', () => {
  // About 5 MB of review, under Lambda's 6 MB; past V8's limit on the arguments of one call.
  const pod = untaggedPod(150_000);
  const everyWarning = pod.spec!.containers!.map(
    (c) => `container "${c.name}" uses image "nginx" without a tag; pin a version`,
  );
  const expected = recordWarnings(everyWarning, WARNINGS_TOTAL_LIMIT, WARNING_ITEM_LIMIT);
  // One review for every test here: a webhook reads it, never changes it, and a copy costs a second.
  const review = admissionReview(pod);

  // Each container is warned about through ctx.warn, and the decision carries them all too.
  const perContainer = defineValidatingWebhook<Pod>({
    name: 'warn-each',
    rules: [],
    validate: (request, ctx) => {
      const warnings: string[] = [];
      for (const c of request.object!.spec!.containers!) {
        const text = `container "${c.name}" uses image "${c.image}" without a tag; pin a version`;
        ctx.warn(text);
        warnings.push(text);
      }
      return allow(warnings).withWarnings(warnings);
    },
  });

  for (const [label, webhook] of [
    ['the fixture project pod-policy', podPolicy],
    ['a function warning through ctx.warn, allow and withWarnings', perContainer],
  ] as const) {
    it(`is answered with the warnings the API server keeps (${label})`, { timeout: PATIENCE_MS }, async () => {
      const { logger, lines } = captureLogger();
      // A clock that stands still: this is about the answer, not about speed (see bench/).
      const raw = await invokeRaw(webhook, review, { handlerOptions: { logger, clock: () => 0 } });
      const result = readAnswer('validating', review, raw);
      assert.equal(result.allowed, true);
      assert.deepEqual(result.warnings, expected);
      assert.ok(result.warnings.length > 0);
      // The deadline path was not taken: no failure logged, the review line says allowed.
      assert.deepEqual(
        lines.filter((l) => l.level === 'error'),
        [],
      );
      const line = lines.find((l) => l.msg === 'review')!;
      assert.equal(line.decision, 'allowed');
      assert.equal(line.TimedOut, 0);
      assert.equal(line.Errored, 0);
    });
  }

  it('keeps every warning of a denial admitted by Warn, the would-deny one first', async () => {
    const webhook = defineValidatingWebhook<Pod>({
      name: 'warn-mode',
      rules: [],
      enforcement: 'Warn',
      validate: () => deny('too many untagged images').withWarnings(everyWarning),
    });
    // A clock that stands still, as above: 150,000 warnings take what they take.
    const result = readAnswer(
      'validating',
      review,
      await invokeRaw(webhook, review, { handlerOptions: { logger: captureLogger().logger, clock: () => 0 } }),
    );
    assert.equal(result.allowed, true);
    const first = wouldDenyWarning(webhook.registration.webhookName, 'too many untagged images');
    assert.deepEqual(
      result.warnings,
      recordWarnings([first, ...everyWarning], WARNINGS_TOTAL_LIMIT, WARNING_ITEM_LIMIT),
    );
  });

  it('takes a list of any length in allow, patched and withWarnings', () => {
    const kept = recordWarnings(everyWarning, WARNINGS_TOTAL_LIMIT, WARNING_ITEM_LIMIT);
    for (const decision of [
      allow(everyWarning),
      patched([], everyWarning),
      deny('no').withWarnings(everyWarning),
      allow('first', everyWarning, 'last'),
    ]) {
      assert.deepEqual(
        sanitizeWarnings(decision.warnings).filter((w) => w !== 'first'),
        kept,
      );
      assert.ok(decision.warnings.length < 200, `${decision.warnings.length} warnings kept`);
    }
  });
});

/** Warnings that test the recorder's edges: empty, multi-byte, unpaired surrogates, control characters. */
const EDGE_WARNINGS = [
  '',
  'a',
  'bb',
  'ccc',
  'aaaaaaaaaa',
  'Iñtërnâtiô',
  'x\ny',
  '\u0085',
  '😀😀😀',
  '\ud800z',
  '\udc00z',
  ' ',
];

/** A random warning: an edge case (with `more`) or a short binary string. */
const warningText = (...more: string[]) =>
  fc.oneof(fc.constantFrom(...EDGE_WARNINGS, ...more), binaryString({ maxLength: 12 }));

describe('WarningList', () => {
  const text = warningText('aaaaaaaa\n', 'bbbbbbbbbbbb\u0000');

  it('keeps what changes what the recorder shows, in any company (small limits)', () => {
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 12 }),
        fc.array(text, { maxLength: 30 }),
        fc.array(text, { maxLength: 12 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 8 }),
        (before, list, after, total, item) => {
          const kept = new WarningList(total, item);
          kept.addAll(list);
          assert.deepEqual(
            recordWarnings([...before, ...kept.items, ...after], total, item),
            recordWarnings([...before, ...list, ...after], total, item),
          );
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('keeps nothing more once complete, and asks a generator for no more', () => {
    let asked = 0;
    function* endless(): Generator<string> {
      for (;;) yield `warning number ${++asked} ${'.'.repeat(100)}`;
    }
    const decision = allow(endless());
    assert.equal(decision.warnings.length, asked);
    assert.ok(asked < 100, `asked for ${asked} warnings`);
    assert.deepEqual(
      sanitizeWarnings(decision.warnings).length,
      sanitizeWarnings(decision.warnings.concat(['one more'])).length,
    );
  });
});

describe('sanitizeWarnings is the API server warning recorder', () => {
  it('matches the recorder on random warnings (small limits, as its own test sets them)', () => {
    const text = warningText();
    fc.assert(
      fc.property(
        fc.array(text, { maxLength: 20 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 8 }),
        (warnings, total, item) => {
          assert.deepEqual(recordWarnings(warnings, total, item), referenceRecorder(warnings, total, item));
        },
      ),
      { numRuns: FUZZ_RUNS },
    );
  });

  it('matches the recorder on random warnings at the API server limits', () => {
    const text = fc.oneof(
      fc.string({ minLength: 1, maxLength: 600, unit: 'grapheme' }),
      binaryString({ maxLength: 40 }),
      fc.constantFrom('same', 'same', 'x'.repeat(300), `${'y'.repeat(300)}\n`),
    );
    fc.assert(
      fc.property(fc.array(text, { maxLength: 60 }), (warnings) => {
        assert.deepEqual(
          sanitizeWarnings(warnings),
          referenceRecorder(warnings, WARNINGS_TOTAL_LIMIT, WARNING_ITEM_LIMIT),
        );
      }),
      { numRuns: FUZZ_RUNS },
    );
  });

  it("gives the API server's own truncation example (limits 25 and 5)", () => {
    const first = ['aaaaaaaaaa', 'aaaaaaaaaa', 'bb', 'ccc', 'Iñtërnâtiô'];
    assert.deepEqual(recordWarnings(first, 25, 5), ['aaaaaaaaaa', 'bb', 'ccc', 'Iñtërnâtiô']);
    const all = [...first, 'e', 'ffffffffff', 'ffffffffff', 'gggggggggg', 'h'];
    assert.deepEqual(recordWarnings(all, 25, 5), ['aaaaa', 'bb', 'ccc', 'Iñtër', 'e', 'fffff', 'ggggg']);
  });

  it('drops a warning holding a control character instead of cleaning it, and keeps blanks that are not empty', () => {
    assert.deepEqual(sanitizeWarnings(['a\u0000b', 'tab\there', 'c1\u0085', 'ok', '', ' ', 'ok']), ['ok', ' ']);
  });

  it('cuts to exactly 256 characters, without "...", counting characters outside the BMP as one', () => {
    const long = '😀'.repeat(300);
    const out = sanitizeWarnings([long, 'x'.repeat(4000)]);
    assert.equal(out[0], '😀'.repeat(256));
    assert.equal(out[1], 'x'.repeat(256));
  });

  it('keeps a long warning whose control character lies past the cut once truncating', () => {
    const late = `${'z'.repeat(300)}\n`;
    // Before truncation the whole text is checked (dropped); replayed cut to 256, it is valid.
    assert.deepEqual(sanitizeWarnings([late, 'w'.repeat(4097)]), ['z'.repeat(256), 'w'.repeat(256)]);
  });

  it('reads lone surrogates as U+FFFD, as the API server decodes them', () => {
    assert.deepEqual(sanitizeWarnings(['a\ud800', 'a\udc00']), ['a\ufffd']);
  });

  it('stops looking at warnings once the API server would ignore the rest', () => {
    let looked = 0;
    function* endless(): Generator<string> {
      for (;;) {
        looked++;
        yield `warning number ${looked} ${'.'.repeat(100)}`;
      }
    }
    const out = sanitizeWarnings(endless());
    assert.ok(out.length > 0);
    assert.ok(looked < 100, `looked at ${looked} warnings`);
  });
});

describe('withDeadline', () => {
  it('refuses an answer that comes after the deadline even when it came synchronously', async () => {
    await assert.rejects(
      withDeadline(() => 'late', 10, performance.now() - 20),
      DeadlineExceeded,
    );
  });

  it('counts the time since the given start', async () => {
    assert.equal(await withDeadline(() => 'on time', 10_000, performance.now() - 20), 'on time');
  });

  it('measures on the clock it is given', async () => {
    let time = 0;
    const clock = () => time;
    assert.equal(await withDeadline(() => ((time += 10), 'on time'), 10, 0, clock), 'on time');
    await assert.rejects(
      withDeadline(() => ((time += 11), 'late'), 10, 10, clock),
      DeadlineExceeded,
    );
  });
});

describe('withWarnings one call at a time', () => {
  /** Calls of WarningList.add made while `run` runs: the work of keeping warnings, whatever the clock. */
  function addsDuring(run: () => void): number {
    const add = WarningList.prototype.add;
    let calls = 0;
    WarningList.prototype.add = function (this: WarningList, warning: unknown) {
      calls++;
      return add.call(this, warning);
    };
    try {
      run();
    } finally {
      WarningList.prototype.add = add;
    }
    return calls;
  }

  // Short distinct warnings: about 4,096 fit before the recorder stops, so a list that is
  // copied on every call would cost millions of adds for these 32,000.
  const many = Array.from({ length: 32_000 }, (_, i) => String(i % 10));
  const distinct = Array.from({ length: 32_000 }, (_, i) => i.toString(36));

  for (const [label, warnings] of [
    ['distinct', distinct],
    ['mostly repeated', many],
  ] as const) {
    it(`costs what adding them as one list costs (32,000 ${label} warnings)`, () => {
      let asList: readonly string[] = [];
      const listAdds = addsDuring(() => (asList = allow(warnings).warnings));
      let oneByOne: readonly string[] = [];
      const singleAdds = addsDuring(() => {
        let decision = allow();
        for (const warning of warnings) decision = decision.withWarnings(warning);
        oneByOne = decision.warnings;
      });
      assert.deepEqual(oneByOne, asList);
      // One add per warning given, at most: the work of the list, not of the list times its length.
      assert.ok(singleAdds <= warnings.length, `${singleAdds} adds one by one, ${listAdds} as a list`);
    });
  }

  it('leaves every earlier decision its own warnings when several are made from one (copy on branch)', () => {
    const base = allow('a');
    const b = base.withWarnings('b');
    const c = base.withWarnings('c');
    const bd = b.withWarnings('d');
    const be = b.withWarnings(['e', 'a']);
    assert.deepEqual(base.warnings, ['a']);
    assert.deepEqual(b.warnings, ['a', 'b']);
    assert.deepEqual(c.warnings, ['a', 'c']);
    assert.deepEqual(bd.warnings, ['a', 'b', 'd']);
    assert.deepEqual(be.warnings, ['a', 'b', 'e']);
    assert.deepEqual(bd.withWarnings('b', 'f').warnings, ['a', 'b', 'd', 'f']);
    // Read before and after a later addition: the same list.
    const read = bd.warnings;
    bd.withWarnings('g');
    assert.deepEqual(bd.warnings, read);
  });

  it('gives, along any tree of calls, what one list of the same warnings gives', () => {
    const text = fc.oneof(fc.constantFrom('', 'a', 'bb', 'x\ny', '😀', '\ud800z'), fc.string({ maxLength: 6 }));
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.nat(), fc.array(text, { maxLength: 4 })), { maxLength: 30 }), (steps) => {
        // Each step picks an earlier decision (by index) and adds a list to it.
        const made: Array<{ decision: Decision; given: string[] }> = [{ decision: deny('no'), given: [] }];
        for (const [pick, list] of steps) {
          const from = made[pick % made.length]!;
          made.push({ decision: from.decision.withWarnings(list), given: [...from.given, ...list] });
        }
        for (const { decision, given } of made) {
          const expected = new WarningList();
          expected.addAll(given);
          assert.deepEqual(decision.warnings, expected.items);
        }
      }),
      { numRuns: FUZZ_RUNS },
    );
  });
});

describe('a decision without warnings', () => {
  it('holds an empty list of its own, the same at every read, and stays itself when nothing is added', () => {
    const none = [() => allow(), () => deny('no'), () => allow().withAuditAnnotations({ a: 'b' }), () => allow([])];
    for (const make of [...none, () => allow(['', 'bell \u0007']), () => deny('no').withWarnings([])]) {
      const decision = make();
      assert.ok(Object.isFrozen(decision));
      assert.deepEqual(decision.warnings, []);
      assert.equal(decision.warnings, decision.warnings, 'the same list at every read');
      assert.notEqual(decision.warnings, make().warnings, 'a list of its own');
      assert.equal(decision.withWarnings(), decision);
      assert.equal(decision.withWarnings([]), decision);
      const warned = decision.withWarnings('w');
      assert.deepEqual(warned.warnings, ['w']);
      assert.deepEqual(decision.warnings, [], 'the decision warned from is unchanged');
      assert.deepEqual(Object.keys(decision).slice(-3), ['warnings', 'withWarnings', 'withAuditAnnotations']);
      assert.deepEqual({ ...decision }.warnings, []);
    }
    // Held as data, not behind an accessor, which costs microseconds to make on every decision.
    for (const make of none) assert.ok('value' in Object.getOwnPropertyDescriptor(make(), 'warnings')!);
  });
});
