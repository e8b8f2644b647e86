/**
 * How long one short exchange may take (a session probe, the era probe, a restore, a listener
 * or legacy endpoint opening): the request timeout, and never more than 10 s, so a generous
 * request timeout does not keep a recovery waiting.
 */
export function probeTimeoutMs(options: { readonly requestTimeoutMs: number }): number {
  return Math.min(options.requestTimeoutMs, 10_000);
}
