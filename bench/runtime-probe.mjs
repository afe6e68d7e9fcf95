// Preloaded into the benchmarked service (`node --import ./bench/runtime-probe.mjs dist/server.js`):
// answers the benchmark's IPC question with the process's RSS and event-loop delay since start
// (or since the last 'reset'). These figures left the service's public /readyz (issue 11, finding
// 10); the benchmark still needs them, from inside the process, without the service carrying
// benchmark code.
//
// Stalls: a 5 ms timer notes every turn where it fired more than STALL_MS late, as the span
// [when it was due, when it ran] on the monotonic clock in µs (process.hrtime, the clock a
// .cpuprofile's timestamps use), so bench/rounds.ts can slice a CPU profile at the stalls.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const STALL_MS = 30;
const TICK_MS = 5;
const MAX_STALLS = 2_000;
const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
let stalls = [];
let due = nowUs() + TICK_MS * 1000;
setInterval(() => {
  const now = nowUs();
  if (now - due > STALL_MS * 1000 && stalls.length < MAX_STALLS) stalls.push([due, now]);
  due = now + TICK_MS * 1000;
}, TICK_MS).unref();
process.on('message', (message) => {
  if (message === 'reset') {
    loopDelay.reset();
    stalls = [];
    process.send({ reset: true });
    return;
  }
  if (message !== 'runtime') return;
  process.send({
    rss_bytes: process.memoryUsage().rss,
    heap_used_bytes: process.memoryUsage().heapUsed,
    event_loop_delay_p99_ms: Math.round((loopDelay.percentile(99) / 1e6) * 100) / 100,
    event_loop_delay_max_ms: Math.round((loopDelay.max / 1e6) * 100) / 100,
    stalls,
  });
});
// The channel must not keep the service alive: it exits on SIGTERM as in production.
process.channel?.unref();
