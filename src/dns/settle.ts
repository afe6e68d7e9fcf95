import { DnsFailure } from './failure.js';
import type { DecodedPacket } from './message.js';
import { afterPendingIo } from './timeout.js';

export interface QueryLife {
  /** Settles the query once (later calls are ignored) and releases its timer, listener and socket. */
  finish(error: DnsFailure | null, reply?: DecodedPacket): void;
  /** True once settled: a query whose caller had already given up never starts. */
  readonly settled: boolean;
}

/**
 * The life of one query on one socket, shared by UDP and TCP: it ends on the reply, a failure,
 * the timeout (fired only after pending I/O, see timeout.ts) or the caller's abort, whichever
 * comes first, and `release` closes the socket exactly once.
 */
export function queryLife(
  options: { signal: AbortSignal; timeoutMs: number; where: string; release: () => void },
  resolve: (reply: DecodedPacket) => void,
  reject: (error: DnsFailure) => void,
): QueryLife {
  const { signal } = options;
  let settled = false;
  const finish = (error: DnsFailure | null, reply?: DecodedPacket): void => {
    if (settled) return;
    settled = true;
    clearTimeout(timer);
    signal.removeEventListener('abort', onAbort);
    options.release();
    if (error) reject(error);
    else resolve(reply!);
  };
  const onAbort = (): void => finish(new DnsFailure('aborted'));
  const timer = setTimeout(() => afterPendingIo(() => finish(new DnsFailure('timeout', options.where))), options.timeoutMs);
  signal.addEventListener('abort', onAbort, { once: true });
  if (signal.aborted) onAbort();
  return {
    finish,
    get settled() {
      return settled;
    },
  };
}
