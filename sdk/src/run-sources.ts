import type { Signals, Source } from './source.js';

/**
 * Runs every source at once and keeps what came back within the budget. A source that throws,
 * rejects, returns undefined or is still running when the time is up is left out; nothing it does
 * later changes the result. Resolves within `budgetMs` (plus the synchronous work of the probes,
 * a few milliseconds), never rejects.
 */
export function runSources(sources: readonly Source[], budgetMs: number): Promise<Signals> {
  const collected: Signals = {};
  return new Promise((resolve) => {
    let pending = sources.length;
    const finish = () => {
      clearTimeout(timer);
      // A copy: a source settling after the deadline must not appear in what was returned.
      resolve({ ...collected });
    };
    const timer = setTimeout(finish, budgetMs);
    if (pending === 0) finish();
    for (const source of sources) {
      // Each probe starts in its own promise, so a synchronous throw is caught like a rejection.
      Promise.resolve()
        .then(() => source.probe())
        .then(
          (value) => {
            if (value !== undefined) collected[source.name] = value;
          },
          () => undefined,
        )
        .then(() => {
          if (--pending === 0) finish();
        });
    }
  });
}
