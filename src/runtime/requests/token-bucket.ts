/**
 * `rateLimit: { perSecond, burst }`: a token bucket. It starts full (`burst` requests may go at
 * once), refills at `perSecond`, and each request sent takes one token.
 */
export class TokenBucket {
  private tokens: number;
  private refilledAt: number;

  constructor(
    private readonly perSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
  ) {
    this.tokens = burst;
    this.refilledAt = this.now();
  }

  /** Takes a token if there is one. */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /** How long until the next token (ms; 0 when one is there). */
  waitMs(): number {
    this.refill();
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) * 1000) / this.perSecond);
  }

  private refill(): void {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.refilledAt) * this.perSecond) / 1000);
    this.refilledAt = now;
  }
}
