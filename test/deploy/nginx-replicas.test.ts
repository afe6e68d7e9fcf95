import { performance } from 'node:perf_hooks';
import { afterAll, describe, expect, it } from 'vitest';
import { hashKey, keyIdOf } from '../../src/keys/key.js';
import { evaluationBody } from '../support/app.js';
import { startLoad, type Answer } from '../support/load.js';
import { startNginx, type AccessLogEntry, type Nginx } from '../support/nginx.js';
import { freePort, startServiceProcess, type ServiceProcess } from '../support/process.js';
import { parseScrape } from '../support/prometheus.js';
import { freshDatabaseUrl, openTestStore } from '../support/store.js';

/**
 * The deployment examples' topology with real processes (no Docker engine runs here): Debian's
 * nginx running deploy/nginx.conf in front of two service processes on one throwaway PostgreSQL,
 * configured as deploy/compose.yaml configures them. A bounded load through nginx, while:
 *
 * 0. behaviour history is shared: events sent to one replica and then the other are counted together;
 * 1. a key is rotated through the admin API: the new one works through nginx, and each replica
 *    refuses the old one within the reload interval (measured per replica, asking each directly);
 * 2. a rolling restart: SIGTERM one replica, start it again, wait until nginx sends it traffic, then
 *    the other. Every request of the load is answered 200: none lost, none an error.
 */

/** As deploy/compose.yaml sets them, except the reload interval, shortened to keep the test short. */
const REPLICA_ENV = { RELOAD_INTERVAL_MS: '500', SHUTDOWN_DELAY_MS: '2000', SHUTDOWN_GRACE_MS: '10000', TRUST_PROXY: '127.0.0.1' };
const RELOAD_INTERVAL_MS = Number(REPLICA_ENV.RELOAD_INTERVAL_MS);
/** The poll itself, the snapshot read and a busy 2-core machine's scheduling on top of the interval. */
const REFUSED_WITHIN_MS = RELOAD_INTERVAL_MS + 1_000;
const WORKERS = 6;
const ACCOUNT = 'acme';

interface Replica {
  port: number;
  metricsPort: number;
  process: ServiceProcess;
}

let databaseUrl: string;
const replicas: Replica[] = [];
let nginx: Nginx | undefined;

let adminToken: string;

/** An instance-wide admin token, made in the store as `npm run admin` would make its owner. */
async function createAdminToken(): Promise<string> {
  const store = await openTestStore({ url: databaseUrl }, { writeLog: false });
  try {
    return (await store.adminTokens.create({ name: 'deploy test', account: null, role: 'owner', expiresAt: null }, 'test')).token;
  } finally {
    await store.close();
  }
}

/** The admin API through nginx, as a pipeline would call it with its token. */
async function admin(method: string, path: string, body?: object): Promise<Record<string, unknown>> {
  const response = await fetch(`${nginx!.url}/admin/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json() as Record<string, unknown>;
  expect(response.status, JSON.stringify(json)).toBeLessThan(300);
  return json;
}

const createKey = async () => (await admin('POST', `/accounts/${ACCOUNT}/keys`)).key as string;

/**
 * A key rotated through the admin API. Resolves with the new key and when the store committed the
 * change (its audit log's clock is this machine's).
 */
async function rotateKey(oldKey: string): Promise<{ key: string; committedAt: number }> {
  const rotated = await admin('POST', `/accounts/${ACCOUNT}/keys/${keyIdOf(hashKey(oldKey))}/rotate`);
  const store = await openTestStore({ url: databaseUrl }, { writeLog: false });
  try {
    const committedAt = (await store.audit({ account: ACCOUNT })).find((entry) => entry.action === 'key.rotate.revoke')!.at;
    return { key: rotated.key as string, committedAt };
  } finally {
    await store.close();
  }
}

async function startReplica(port: number, metricsPort: number): Promise<ServiceProcess> {
  return startServiceProcess({ ...REPLICA_ENV, API_KEYS: '', DATABASE_URL: databaseUrl, PORT: String(port), METRICS_PORT: String(metricsPort) });
}

const evaluate = (url: string, key: string, body: object = evaluationBody()) =>
  fetch(`${url}/v1/risk/evaluate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Wall-clock ms at which `url` first refuses `key`, asking every 10 ms. */
async function refusedAt(url: string, key: string): Promise<number> {
  for (;;) {
    const response = await evaluate(url, key);
    await response.arrayBuffer();
    if (response.status === 401) return Date.now();
    expect(response.status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const servedBy = (entry: AccessLogEntry, port: number) => entry.upstream.split(', ').at(-1) === `127.0.0.1:${port}` && entry.status === 200;

afterAll(async () => {
  await nginx?.stop();
  await Promise.all(replicas.map((r) => r.process.stop()));
});

describe('two replicas behind nginx on one PostgreSQL', () => {
  it('answer every request through a key rotation and a rolling restart', async () => {
    databaseUrl = await freshDatabaseUrl('postgres');
    for (let i = 0; i < 2; i++) {
      const [port, metricsPort] = [await freePort(), await freePort()];
      replicas.push({ port, metricsPort, process: await startReplica(port, metricsPort) });
    }
    nginx = await startNginx(replicas.map((r) => r.port));
    adminToken = await createAdminToken();
    await admin('POST', '/accounts', { id: ACCOUNT, name: 'Acme' });

    // Keys before the replicas read the store: created here, seen by both at their next poll.
    const kept = await createKey();
    const rotated = await createKey();
    await expect.poll(async () => (await evaluate(nginx!.url, rotated)).status, { timeout: 10_000, interval: 50 }).toBe(200);
    // Each replica sees the keys at its own poll: step 0 asks each one directly (through nginx, the
    // poll above may have been answered by one replica while the other had not polled yet).
    for (const replica of replicas) {
      await expect.poll(async () => (await evaluate(`http://127.0.0.1:${replica.port}`, kept)).status, { timeout: 10_000, interval: 50 }).toBe(200);
    }

    // 0. One stream of sign-ups from one address, alternating between the replicas: each answer
    //    counts every event before it, whichever replica recorded it, once that replica's writer
    //    has sent it (every 50 ms: src/store/history-postgres.ts; separate processes, so waited out).
    const address = { ip: '81.2.69.190' };
    for (let i = 1; i <= 6; i++) {
      const replica = replicas[i % 2]!;
      if (i > 1) await new Promise((r) => setTimeout(r, 250));
      const answer = await (await evaluate(`http://127.0.0.1:${replica.port}`, kept, evaluationBody({ ...address, email: `user${i}@example.com` }))).json() as { history: { ip: { events_1h: number; accounts_24h: number } } };
      expect(answer.history.ip).toMatchObject({ events_1h: i, accounts_24h: i });
    }

    let stop = false;
    const notOk: string[] = [];
    let slowestMs = 0;
    const load = startLoad({
      url: nginx!.url,
      workers: WORKERS,
      until: () => stop,
      request: () => ({ path: '/v1/risk/evaluate', key: kept, body: evaluationBody() }),
      inspect: (answer: Answer) => {
        if (answer.status !== 200) notOk.push(`${answer.status}: ${JSON.stringify(answer.body)}`);
        slowestMs = Math.max(slowestMs, answer.ms);
      },
    });
    const answered = () => load.figures.outcomes['200'] ?? 0;
    await expect.poll(answered, { timeout: 20_000, interval: 20 }).toBeGreaterThan(10 * WORKERS);

    // 1. A key rotated: each replica refuses the old key within the reload interval, and through
    //    nginx the new key works and the old one is refused.
    const rotation = await rotateKey(rotated);
    const refusals = await Promise.all(replicas.map((r) => refusedAt(`http://127.0.0.1:${r.port}`, rotated)));
    const rotationDelays = refusals.map((at) => at - rotation.committedAt);
    for (const delay of rotationDelays) expect(delay).toBeLessThan(REFUSED_WITHIN_MS);
    for (let i = 0; i < 4; i++) {
      expect((await evaluate(nginx!.url, rotation.key)).status).toBe(200);
      expect((await evaluate(nginx!.url, rotated)).status).toBe(401);
    }

    // 2. The rolling restart, one replica at a time, under the same load.
    const restarts: Array<{ replica: number; drainMs: number; downMs: number; backInRotationMs: number }> = [];
    for (const [i, replica] of replicas.entries()) {
      const before = answered();
      const signalled = performance.now();
      expect(await replica.process.stop()).toBe(0);
      const exited = performance.now();
      replica.process = await startReplica(replica.port, replica.metricsPort);
      const ready = performance.now();
      // Back in nginx's rotation: a request answered by it, sent after it was ready.
      const logged = nginx!.accessLog().length;
      await expect.poll(() => nginx!.accessLog().slice(logged).some((entry) => servedBy(entry, replica.port)), { timeout: 20_000, interval: 20 }).toBe(true);
      restarts.push({ replica: i + 1, drainMs: Math.round(exited - signalled), downMs: Math.round(ready - exited), backInRotationMs: Math.round(performance.now() - ready) });
      // The load went on all along.
      expect(answered()).toBeGreaterThan(before);
    }

    stop = true;
    const figures = await load.done;
    const log = nginx!.accessLog();
    const retried = log.filter((entry) => entry.upstream.includes(', '));
    // Why: a refused connection carried no request; a reset or early close may have carried one (the case `non_idempotent` is for).
    const errors = nginx!.errorLog();
    const refused = errors.match(/Connection refused/g)?.length ?? 0;
    const cutOff = errors.match(/reset by peer|prematurely closed/g)?.length ?? 0;
    console.log(
      `nginx + 2 replicas + PostgreSQL: ${figures.sent} requests through nginx, ${figures.outcomes['200'] ?? 0} answered 200, ` +
        `${figures.noResponse.length} without an answer, ${notOk.length} other statuses, slowest ${Math.round(slowestMs)} ms; ` +
        `${retried.length} retried by nginx on the other replica (${refused} connections refused, ${cutOff} reset or closed before an answer); ` +
        `rotated key refused ${rotationDelays.join(' and ')} ms after the commit (reload interval ${RELOAD_INTERVAL_MS} ms); ` +
        restarts.map((r) => `replica ${r.replica}: SIGTERM to exit ${r.drainMs} ms, down ${r.downMs} ms, back in rotation ${r.backInRotationMs} ms after ready`).join('; '),
    );

    expect(figures.noResponse).toEqual([]);
    expect(notOk).toEqual([]);
    expect(figures.outcomes).toEqual({ 200: figures.sent });
    // Every answer nginx gave was a replica's 200, the 401s and 200s of the rotation's checks, or
    // the 201s of the admin calls (the account, two keys, the rotation).
    expect(log.filter((entry) => entry.status !== 200 && entry.status !== 401 && !(entry.status === 201 && entry.method === 'POST'))).toEqual([]);
    expect(log.filter((entry) => entry.status === 201)).toHaveLength(4);

    // Each replica's own metrics listener counted what it served since its restart.
    for (const replica of replicas) {
      const scrape = parseScrape(await (await fetch(`http://127.0.0.1:${replica.metricsPort}/metrics`)).text());
      // One address all along: ip_velocity sends the load to review once the hour's count passes 5.
      const states = ['approve', 'review', 'decline'].map((state) => scrape.value('risk_evaluations_total', { event_type: 'account_register', state }));
      expect(states.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
      expect(scrape.value('risk_store_up')).toBe(1);
    }
  }, 240_000);
});
