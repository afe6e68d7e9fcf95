// Loaded with `--import` into the benchmarked service by bench/allocations.ts: V8's sampling heap
// profiler, started and stopped over the IPC channel ('start', 'stop'), counting objects the
// collector has freed as well (every allocation, not only what is still alive; with
// HEAP_SURVIVORS=1, all but those a scavenge freed), written to
// HEAP_PROFILE. Benchmarks only; the service never loads it.
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const session = new Session();
session.connect();
const post = (method, params) => new Promise((resolve, reject) => session.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));
await post('HeapProfiler.enable');

process.on('message', async (message) => {
  if (message === 'start') {
    // HEAP_SURVIVORS=1: not the objects a scavenge freed, so what is left is what outlived the young
    // generation (copied, then promoted), by where it was allocated.
    const minor = process.env.HEAP_SURVIVORS !== '1';
    await post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: minor });
  } else if (message === 'stop') {
    const { profile } = await post('HeapProfiler.stopSampling');
    writeFileSync(process.env.HEAP_PROFILE, JSON.stringify(profile));
  } else {
    return;
  }
  process.send(message);
});
