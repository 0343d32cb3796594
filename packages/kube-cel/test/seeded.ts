// A seeded random generator for tests that generate cases: the same sequence on every machine.

/** mulberry32 from `seed`: `next` in [0, 1), `int` in [0, n), `pick` one element of a list. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number): number => Math.floor(next() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)]!;
  return { next, int, pick };
}

/** What seeded returns. */
export type Seeded = ReturnType<typeof seeded>;
