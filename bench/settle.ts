import { readFileSync } from 'node:fs';

/**
 * User + system CPU in clock ticks (10 ms: USER_HZ = 100) from a /proc `stat` file: a process's
 * (`/proc/<pid>/stat`, all its threads) or one thread's (`/proc/<pid>/task/<tid>/stat`); null when
 * it cannot be read (not Linux, the process or thread gone).
 */
export function cpuTicksOf(statFile: string): number | null {
  try {
    const fields = readFileSync(statFile, 'utf8').split(') ')[1]!.split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime, stime
  } catch {
    return null;
  }
}

const processCpuTicks = (pid: number | undefined) => cpuTicksOf(`/proc/${pid}/stat`);

/** User + system CPU seconds of a process so far, all its threads (Linux /proc, 10 ms resolution); null elsewhere. */
export function processCpuSeconds(pid: number | undefined): number | null {
  const ticks = processCpuTicks(pid);
  return ticks === null ? null : ticks / 100;
}

const POLL_MS = 200;
/** Two polls in a row with at most one tick (10 ms) of CPU each: under 5 % of a core, timers and probes only. */
const QUIET_POLLS = 2;
/** The least `settled` can answer: the quiet polls that tell the service is idle. */
export const SETTLE_FLOOR_MS = QUIET_POLLS * POLL_MS;

/**
 * Waits, after a load run, until the service is idle again (see QUIET_POLLS), at most `limitMs`.
 * At saturation the SQLite writer thread falls behind (issue 24: up to 27,000 identifiers waiting
 * after 60 s of new people), so part of what a run costs is done after it: read at its last request,
 * a run's CPU per request leaves that out, and the catch-up lands on whatever runs next (the
 * ceiling's run, the other build's). Read after this, it is in. Returns the milliseconds it waited,
 * SETTLE_FLOOR_MS of them the quiet polls (0 where /proc is not there); says so on standard error
 * if the service was still busy at the limit.
 */
export async function settled(pid: number | undefined, limitMs = 30_000): Promise<number> {
  const start = performance.now();
  let last = processCpuTicks(pid);
  if (last === null) return 0;
  let quiet = 0;
  while (quiet < QUIET_POLLS) {
    if (performance.now() - start >= limitMs) {
      console.error(`settle: the service (pid ${pid}) still busy ${limitMs} ms after the run; its CPU read anyway`);
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    const now = processCpuTicks(pid);
    if (now === null) break;
    quiet = now - last <= 1 ? quiet + 1 : 0;
    last = now;
  }
  return Math.round(performance.now() - start);
}
