/**
 * Why a lookup could not be answered. None of these is a statement about the domain: each one
 * makes deliverability `unknown`, never `undeliverable`.
 */
export type FailureReason =
  /** No usable reply before the deadline (dropped, spoofed, wrong question, slow server). */
  | 'timeout'
  /** The server said it could not answer (RCODE 2). */
  | 'servfail'
  /** The server will not answer us (RCODE 5). */
  | 'refused'
  /** The server cannot be reached: port closed, host or network unreachable. */
  | 'network'
  /**
   * This machine could not send the query: out of file descriptors, buffers or ports, or too many
   * queries already waiting for a slot. Not the server's fault, so never held against it.
   */
  | 'local'
  /** A reply that did not decode or made no sense (TCP only; a bad UDP datagram is ignored). */
  | 'malformed'
  /** Every server failed recently; the client backs off instead of waiting out the timeout again. */
  | 'backoff'
  /** The caller's deadline passed. */
  | 'aborted';

export class DnsFailure extends Error {
  constructor(readonly reason: FailureReason, detail?: string) {
    super(detail === undefined ? reason : `${reason}: ${detail}`);
    this.name = 'DnsFailure';
  }
}

/**
 * Socket errors that are about this machine, not the server: a process out of descriptors
 * (EMFILE), a system out of them (ENFILE), of socket buffers or memory, of local ports.
 */
const LOCAL_ERRORS = new Set(['EMFILE', 'ENFILE', 'ENOBUFS', 'ENOMEM', 'EADDRNOTAVAIL', 'EADDRINUSE', 'EAGAIN']);

/** A socket error as a failure: `local` when this machine ran short, `network` otherwise. */
export function socketFailure(error: unknown, where: string): DnsFailure {
  if (error instanceof DnsFailure) return error;
  const code = (error as NodeJS.ErrnoException | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return new DnsFailure(code !== undefined && LOCAL_ERRORS.has(code) ? 'local' : 'network', `${where}: ${message}`);
}
