/**
 * Per-server failure tracking. After `threshold` consecutive failures (timeouts, socket errors,
 * REFUSED) a server is skipped for a back-off window; when the window ends one query probes it.
 * A failed probe doubles the window, up to `maxMs`; any good reply resets it. Consecutive, so that
 * one dead domain among healthy traffic (whose successes interleave) does not take a healthy server out.
 */
export interface BackoffOptions {
  threshold: number;
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { threshold: 5, initialMs: 1_000, maxMs: 30_000 };

export class ServerHealth {
  private failures = 0;
  private windowMs = 0;
  private downUntil = 0;
  private probing = false;

  constructor(
    private readonly options: BackoffOptions,
    private readonly now: () => number,
  ) {}

  /** Whether a query may go to this server now; claims the probe slot when a window has just ended. */
  tryUse(): boolean {
    if (this.failures < this.options.threshold) return true;
    if (this.now() < this.downUntil || this.probing) return false;
    this.probing = true;
    return true;
  }

  get backingOff(): boolean {
    return this.failures >= this.options.threshold && this.now() < this.downUntil;
  }

  succeeded(): void {
    this.failures = 0;
    this.windowMs = 0;
    this.downUntil = 0;
    this.probing = false;
  }

  /** The claimed use ended without a verdict (the caller's deadline passed first). */
  abandoned(): void {
    this.probing = false;
  }

  failed(): void {
    this.failures += 1;
    this.probing = false;
    if (this.failures < this.options.threshold) return;
    // Queries sent before the window opened fail with the one that opened it: under load, dozens at
    // once. Each doubling the window would bench a server for up to `maxMs` after a blip of a
    // second. Only the crossing and a failed probe (sent once the window ended) open or widen it.
    if (this.now() < this.downUntil) return;
    this.windowMs = this.windowMs === 0 ? this.options.initialMs : Math.min(this.windowMs * 2, this.options.maxMs);
    this.downUntil = this.now() + this.windowMs;
  }
}
