import { DnsFailure } from './failure.js';

/**
 * Caps the queries in flight (sockets open at once) and the look-ups waiting for one. Waiters
 * queue in order and give up when their lookup's deadline passes, so a burst degrades to
 * `unknown` instead of exhausting sockets; past `maxWaiting` a look-up fails at once (`local`:
 * this machine is busy, which says nothing about the server).
 */
export class InFlightLimit {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly max: number,
    readonly maxWaiting: number,
  ) {}

  get inFlight(): number {
    return this.active;
  }

  async run<T>(signal: AbortSignal, task: () => Promise<T>): Promise<T> {
    await this.acquire(signal);
    try {
      return await task();
    } finally {
      this.release();
    }
  }

  private acquire(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(new DnsFailure('aborted'));
    if (this.active < this.max) {
      this.active += 1;
      return Promise.resolve();
    }
    if (this.waiting.length >= this.maxWaiting) {
      return Promise.reject(new DnsFailure('local', `${this.max} queries in flight and ${this.maxWaiting} waiting`));
    }
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.active += 1;
        resolve();
      };
      const onAbort = (): void => {
        const at = this.waiting.indexOf(grant);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(new DnsFailure('aborted', 'waited for a free query slot'));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(grant);
    });
  }

  private release(): void {
    this.active -= 1;
    this.waiting.shift()?.();
  }
}
