/**
 * Go's sort.Sort (pattern-defeating quicksort, Go 1.19 and later), so that a list Kubernetes
 * sorts with it comes out in the same order here: the sort is not stable, and where equal
 * elements end up is part of the answer (label selector requirements of one key).
 */

/** The three shifts of Go's sort xorshift generator: `13, 7, 17` in the Go releases Kubernetes builds with (Go 1.19 had `13, 17, 5`). */
export type XorshiftShifts = readonly [bigint, bigint, bigint];
const GO_XORSHIFT: XorshiftShifts = [13n, 7n, 17n];
const MASK64 = (1n << 64n) - 1n;

/** Go's bits.Len for a non-negative int below 2^32. */
const bitsLen = (n: number): number => 32 - Math.clz32(n);

/** An in-place sort of `list` by `less`, step for step as Go's pdqsort. */
class PdqSort<T> {
  constructor(
    private readonly list: T[],
    private readonly less: (a: T, b: T) => boolean,
    private readonly shifts: XorshiftShifts,
  ) {}

  private lt(i: number, j: number): boolean {
    return this.less(this.list[i]!, this.list[j]!);
  }
  private swap(i: number, j: number): void {
    const t = this.list[i]!;
    this.list[i] = this.list[j]!;
    this.list[j] = t;
  }

  insertionSort(a: number, b: number): void {
    for (let i = a + 1; i < b; i++) for (let j = i; j > a && this.lt(j, j - 1); j--) this.swap(j, j - 1);
  }

  private siftDown(lo: number, hi: number, first: number): void {
    let root = lo;
    for (;;) {
      let child = 2 * root + 1;
      if (child >= hi) return;
      if (child + 1 < hi && this.lt(first + child, first + child + 1)) child++;
      if (!this.lt(first + root, first + child)) return;
      this.swap(first + root, first + child);
      root = child;
    }
  }

  private heapSort(a: number, b: number): void {
    const hi = b - a;
    for (let i = Math.trunc((hi - 1) / 2); i >= 0; i--) this.siftDown(i, hi, a);
    for (let i = hi - 1; i >= 0; i--) {
      this.swap(a, a + i);
      this.siftDown(0, i, a);
    }
  }

  sort(a: number, b: number, limit: number): void {
    let wasBalanced = true;
    let wasPartitioned = true;
    for (;;) {
      const length = b - a;
      // Go sorts 12 elements or fewer by insertion, and falls back to heapsort after too many bad pivots.
      if (length <= 12) {
        this.insertionSort(a, b);
        return;
      }
      if (limit === 0) {
        this.heapSort(a, b);
        return;
      }
      if (!wasBalanced) {
        this.breakPatterns(a, b);
        limit--;
      }
      let [pivot, hint] = this.choosePivot(a, b);
      if (hint === 'decreasing') {
        this.reverseRange(a, b);
        pivot = b - 1 - (pivot - a);
        hint = 'increasing';
      }
      if (wasBalanced && wasPartitioned && hint === 'increasing' && this.partialInsertionSort(a, b)) return;
      if (a > 0 && !this.lt(a - 1, pivot)) {
        a = this.partitionEqual(a, b, pivot);
        continue;
      }
      const [mid, alreadyPartitioned] = this.partition(a, b, pivot);
      wasPartitioned = alreadyPartitioned;
      const leftLen = mid - a;
      const rightLen = b - mid;
      const balanceThreshold = Math.trunc(length / 8);
      if (leftLen < rightLen) {
        wasBalanced = leftLen >= balanceThreshold;
        this.sort(a, mid, limit);
        a = mid + 1;
      } else {
        wasBalanced = rightLen >= balanceThreshold;
        this.sort(mid + 1, b, limit);
        b = mid;
      }
    }
  }

  private partition(a: number, b: number, pivot: number): [number, boolean] {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    while (i <= j && this.lt(i, a)) i++;
    while (i <= j && !this.lt(j, a)) j--;
    if (i > j) {
      this.swap(j, a);
      return [j, true];
    }
    this.swap(i++, j--);
    for (;;) {
      while (i <= j && this.lt(i, a)) i++;
      while (i <= j && !this.lt(j, a)) j--;
      if (i > j) break;
      this.swap(i++, j--);
    }
    this.swap(j, a);
    return [j, false];
  }

  private partitionEqual(a: number, b: number, pivot: number): number {
    this.swap(a, pivot);
    let i = a + 1;
    let j = b - 1;
    for (;;) {
      while (i <= j && !this.lt(a, i)) i++;
      while (i <= j && this.lt(a, j)) j--;
      if (i > j) return i;
      this.swap(i++, j--);
    }
  }

  private partialInsertionSort(a: number, b: number): boolean {
    let i = a + 1;
    for (let step = 0; step < 5; step++) {
      while (i < b && !this.lt(i, i - 1)) i++;
      if (i === b) return true;
      if (b - a < 50) return false;
      this.swap(i, i - 1);
      // Go shifts the smaller one left down to index 1 (not a + 1), and the greater one right.
      if (i - a >= 2) for (let j = i - 1; j >= 1 && this.lt(j, j - 1); j--) this.swap(j, j - 1);
      if (b - i >= 2) for (let j = i + 1; j < b && this.lt(j, j - 1); j++) this.swap(j, j - 1);
    }
    return false;
  }

  private breakPatterns(a: number, b: number): void {
    const length = b - a;
    if (length < 8) return;
    let random = BigInt(length);
    const mask = BigInt((1 << bitsLen(length)) - 1);
    const [s1, s2, s3] = this.shifts;
    const start = a + Math.trunc(length / 4) * 2 - 1;
    for (let idx = start; idx <= start + 2; idx++) {
      random ^= (random << s1) & MASK64;
      random ^= random >> s2;
      random ^= (random << s3) & MASK64;
      let other = Number(random & mask);
      if (other >= length) other -= length;
      this.swap(idx, a + other);
    }
  }

  private choosePivot(a: number, b: number): [number, 'unknown' | 'increasing' | 'decreasing'] {
    const l = b - a;
    const swaps = { n: 0 };
    const quarter = Math.trunc(l / 4);
    let i = a + quarter;
    let j = a + quarter * 2;
    let k = a + quarter * 3;
    if (l >= 8) {
      if (l >= 50) {
        i = this.median(i - 1, i, i + 1, swaps);
        j = this.median(j - 1, j, j + 1, swaps);
        k = this.median(k - 1, k, k + 1, swaps);
      }
      j = this.median(i, j, k, swaps);
    }
    return [j, swaps.n === 0 ? 'increasing' : swaps.n === 12 ? 'decreasing' : 'unknown'];
  }

  private median(a: number, b: number, c: number, swaps: { n: number }): number {
    const order = (x: number, y: number): [number, number] => {
      if (!this.lt(y, x)) return [x, y];
      swaps.n++;
      return [y, x];
    };
    [a, b] = order(a, b);
    [b, c] = order(b, c);
    [a, b] = order(a, b);
    return b;
  }

  private reverseRange(a: number, b: number): void {
    for (let i = a, j = b - 1; i < j; i++, j--) this.swap(i, j);
  }
}

/** Go's sort.Sort of `list` in place by `less`; `shifts` is for comparing with older Go releases. */
export function goSort<T>(list: T[], less: (a: T, b: T) => boolean, shifts: XorshiftShifts = GO_XORSHIFT): T[] {
  if (list.length > 1) new PdqSort(list, less, shifts).sort(0, list.length, bitsLen(list.length));
  return list;
}
