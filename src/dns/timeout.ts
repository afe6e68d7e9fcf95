/**
 * Runs `fn` after the I/O that is already waiting has been handled. Timers run before the poll
 * phase, so after the event loop stalls (a long GC, a burst of work) a timeout would fire while
 * its reply sits unread in the socket buffer: the answer would be thrown away and a healthy server
 * counted as failing. `setImmediate` runs after the poll phase, so a reply that arrived in time wins.
 */
export function afterPendingIo(fn: () => void): void {
  setImmediate(fn);
}
