/**
 * The benches' `--env K=V` options as an environment to add to the service's: a value may hold
 * `=` itself (a database URL's query), and an entry without one is refused, not read as a key.
 */
export function envPairs(pairs: readonly string[]): Record<string, string> {
  return Object.fromEntries(pairs.map((pair) => {
    const at = pair.indexOf('=');
    if (at <= 0) throw new Error(`--env ${pair}: expected K=V`);
    return [pair.slice(0, at), pair.slice(at + 1)];
  }));
}
