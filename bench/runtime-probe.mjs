// Preloaded into the benchmarked service (`node --import ./bench/runtime-probe.mjs dist/server.js`):
// answers the benchmark's IPC question with the process's RSS and event-loop delay since start.
// These figures left the service's public /readyz (issue 11, finding 10); the benchmark still
// needs them, from inside the process, without the service carrying benchmark code.
import { monitorEventLoopDelay } from 'node:perf_hooks';

const loopDelay = monitorEventLoopDelay({ resolution: 10 });
loopDelay.enable();
process.on('message', (message) => {
  if (message !== 'runtime') return;
  process.send({
    rss_bytes: process.memoryUsage().rss,
    heap_used_bytes: process.memoryUsage().heapUsed,
    event_loop_delay_p99_ms: Math.round((loopDelay.percentile(99) / 1e6) * 100) / 100,
  });
});
// The channel must not keep the service alive: it exits on SIGTERM as in production.
process.channel?.unref();
