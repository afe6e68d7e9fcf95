import { readFileSync } from 'node:fs';

/** User + system CPU seconds of a process so far, all its threads (Linux /proc, in 10 ms ticks); null elsewhere. */
export function processCpuSeconds(pid: number | undefined): number | null {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
  } catch {
    return null;
  }
}

const POLL_MS = 200;
/** At most one clock tick (10 ms) of CPU in a poll: 5 % of a core, timers and probes only. */
const IDLE_SECONDS = 0.01;

/**
 * Waits, after a load run, until the service is idle again: under 5 % of a core for two polls of
 * 200 ms in a row, at most `limitMs`. At saturation the SQLite writer thread falls behind (issue 24:
 * up to 27,000 identifiers waiting after 60 s of new people), so part of what a run costs is done
 * after it: read at its last request, a run's CPU per request leaves that out, and the catch-up
 * lands on whatever runs next (the ceiling's run, the other build's). Read after this, it is in.
 * Returns the milliseconds it waited (0 where /proc is not there).
 */
export async function settled(pid: number | undefined, limitMs = 30_000): Promise<number> {
  const start = performance.now();
  let last = processCpuSeconds(pid);
  if (last === null) return 0;
  for (let quiet = 0; quiet < 2 && performance.now() - start < limitMs;) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const now = processCpuSeconds(pid);
    if (now === null) break;
    quiet = now - last <= IDLE_SECONDS ? quiet + 1 : 0;
    last = now;
  }
  return Math.round(performance.now() - start);
}
