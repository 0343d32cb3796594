/** One lint finding. */
export interface Finding {
  level: 'error' | 'warning';
  /** Stable rule id, e.g. `timeout-range`. */
  rule: string;
  /** The webhook (or CRD) it is about. */
  subject: string;
  message: string;
}
