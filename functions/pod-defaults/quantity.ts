/** Multipliers of Kubernetes quantity suffixes (`resource.Quantity`). */
const SUFFIXES: Record<string, number> = {
  '': 1,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** The value of a quantity such as `500m`, `128Mi` or `1e3`; NaN when it is not one. */
export function parseQuantity(value: string): number {
  const match = /^([+-]?(?:\d+\.?\d*|\.\d+))(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|[mkMGTPE])?)$/.exec(value.trim());
  if (!match) return Number.NaN;
  const base = Number(match[1]);
  if (match[2]) return base * 10 ** Number(match[2].slice(1));
  return base * SUFFIXES[match[3] ?? '']!;
}
