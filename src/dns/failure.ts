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
  /** Socket error: port closed, host unreachable. */
  | 'network'
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
