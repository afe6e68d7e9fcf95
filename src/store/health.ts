import type { Logger } from 'pino';

/**
 * Whether the store answers, as the last probe or write found it. The request path reads
 * `available` (a field, no I/O); transitions are logged once each way.
 */
export class StoreHealth {
  available = true;
  lastError: string | null = null;
  private readonly listeners: Array<() => void> = [];

  constructor(private readonly logger: Logger) {}

  down(error: Error): void {
    this.lastError = error.message || (error as { code?: string }).code || String(error);
    if (!this.available) return;
    this.available = false;
    this.logger.warn({ error: this.lastError }, 'store unavailable: evaluations answer without it, configuration serves from memory');
  }

  up(): void {
    if (this.available) return;
    this.available = true;
    this.logger.info({ after: this.lastError }, 'store available again');
    for (const listener of this.listeners) listener();
  }

  onRecovery(listener: () => void): void {
    this.listeners.push(listener);
  }
}
