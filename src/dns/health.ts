/**
 * Whether a DNS server is up, judged only on evidence about the server, never about one name.
 *
 * A recursive resolver that answers SERVFAIL for a name, or never answers it because the name's
 * own servers are dead, is healthy: anyone can register a domain whose name servers never answer,
 * and if that counted against the resolver, one fraudster's sign-ups would take DNS away from
 * everyone. So:
 *
 * - Any reply (NOERROR, NXDOMAIN, SERVFAIL…) shows the server is up. REFUSED may be policy about
 *   that one name (a resolver can refuse a zone, e.g. unbound's `local-zone: … refuse`) or about
 *   us: the liveness check below tells, and only its REFUSED is a strike.
 * - A socket error that says the server cannot be reached (port closed, host unreachable) is a
 *   strike, unless the server has replied to something since that query was sent.
 * - A query that timed out says nothing by itself. If the server replied to any other query
 *   after this one was sent, it is alive and the name is slow. If it has been silent since, the
 *   server is asked a question every recursive resolver answers at once, from the root's NS set it
 *   always holds (RFC 8109): no reply, a strike; any other reply clears it. (dnsdist's "lazy"
 *   health checks work this way: a check only after regular queries fail.)
 * - A local shortage (out of file descriptors, the in-flight cap) is not the server's doing: the
 *   resolver never reports it here.
 *
 * Any reply also counts as evidence for the timeouts and checks waiting on it, REFUSED included:
 * the server spoke.
 *
 * `threshold` strikes in a row open a back-off window: the server is skipped. When the window
 * ends the liveness check runs again (not a user's query, which may be for a dead name); a
 * failed check doubles the window, up to `maxMs`; a reply ends the back-off.
 */
export interface BackoffOptions {
  threshold: number;
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { threshold: 3, initialMs: 1_000, maxMs: 30_000 };

/** What the liveness check found. `inconclusive`: it could not be sent (a local shortage). */
export type CheckResult = 'answered' | 'refused' | 'unreachable' | 'silent' | 'inconclusive';

export class ServerHealth {
  /** Replies seen so far (any RCODE): a query compares it with its mark to know whether the server spoke since. */
  private replies = 0;
  private strikes = 0;
  private windowMs = 0;
  private downUntil = 0;
  private checking = false;

  constructor(
    private readonly options: BackoffOptions,
    private readonly now: () => number,
    /** Sends the liveness question; never rejects. */
    private readonly check: () => Promise<CheckResult>,
  ) {}

  /** Whether queries may go to the server now. Once a back-off window has passed, starts the liveness check. */
  usable(): boolean {
    if (!this.backingOff) return true;
    if (this.now() >= this.downUntil) this.startCheck();
    return false;
  }

  /** Skipped until a liveness check gets a reply. */
  get backingOff(): boolean {
    return this.strikes >= this.options.threshold;
  }

  /** Taken when a query is sent, and handed back with its failure. */
  mark(): number {
    return this.replies;
  }

  answered(): void {
    this.replies += 1;
    this.strikes = 0;
    this.windowMs = 0;
    this.downUntil = 0;
  }

  refused(): void {
    this.replies += 1;
    if (!this.backingOff) this.startCheck();
  }

  unreachable(mark: number): void {
    if (this.replies === mark) this.strike();
  }

  timedOut(mark: number): void {
    if (this.replies === mark && !this.backingOff) this.startCheck();
  }

  private strike(): void {
    this.strikes += 1;
    if (this.strikes < this.options.threshold) return;
    // Queries sent before the window opened fail with the one that opened it: under load, dozens at
    // once. Each doubling the window would bench a server for up to `maxMs` after a blip of a
    // second. Only the crossing and a failed check (run once the window ended) open or widen it.
    if (this.now() < this.downUntil) return;
    this.windowMs = this.windowMs === 0 ? this.options.initialMs : Math.min(this.windowMs * 2, this.options.maxMs);
    this.downUntil = this.now() + this.windowMs;
  }

  /** One check at a time per server. */
  private startCheck(): void {
    if (this.checking) return;
    this.checking = true;
    const mark = this.replies;
    void this.check().then((result) => {
      this.checking = false;
      if (result === 'answered') this.answered();
      else if (result === 'refused') {
        // It refuses a question every resolver answers to anyone it serves: it refuses us.
        this.replies += 1;
        this.strike();
      }
      // A reply to anything else while the check waited outweighs its silence.
      else if ((result === 'unreachable' || result === 'silent') && this.replies === mark) this.strike();
    });
  }
}
