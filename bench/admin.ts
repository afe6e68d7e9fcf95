/**
 * `npx tsx bench/admin.ts`: what the admin API costs. Figures to compare on one machine, not
 * bounds (no test asserts a speed):
 *
 * - hashing one password with the production scrypt parameters (a login's cost, and a stranger's);
 * - an authenticated read through the real app on SQLite: a session cookie (session, user and
 *   memberships read from the store per request) and an admin token;
 * - a burst of concurrent logins: how many are checked, and how many are refused at once (429)
 *   by the bound on hashes running and waiting.
 *
 *   npx tsx bench/admin.ts [--reads 2000] [--burst 64]
 */
import './temp-root.js';
import { parseArgs } from 'node:util';
import { performance } from 'node:perf_hooks';
import { hashPassword } from '../src/admin/password.js';
import { startTestApp } from '../test/support/app.js';
import { createUser, login, PASSWORD } from '../test/support/admin.js';

const { values } = parseArgs({ options: { reads: { type: 'string', default: '2000' }, burst: { type: 'string', default: '64' } } });
const reads = Math.min(100_000, Number(values.reads));
const burst = Math.min(1_000, Number(values.burst));

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
const summary = (ms: number[]) => {
  const sorted = [...ms].sort((a, b) => a - b);
  return `p50 ${percentile(sorted, 50).toFixed(3)} ms, p99 ${percentile(sorted, 99).toFixed(3)} ms (${sorted.length} runs)`;
};

async function main(): Promise<void> {
  const hashes: number[] = [];
  for (let i = 0; i < 10; i++) {
    const start = performance.now();
    await hashPassword(`password number ${i}`);
    hashes.push(performance.now() - start);
  }
  console.log(`scrypt hash (N=2^14, r=8, p=5): ${summary(hashes)}`);

  const t = await startTestApp({ LOG_LEVEL: 'warn' });
  try {
    await createUser(t.app.store, 'owner@example.com', { owner: true });
    const session = await login(t.app, 'owner@example.com');
    const token = (await t.app.inject({ method: 'POST', url: '/admin/v1/tokens', headers: session.write, payload: { name: 'bench', role: 'owner' } })).json().token as string;
    for (const [name, headers, url] of [
      ['session cookie, GET /admin/v1/session', session.read, '/admin/v1/session'],
      ['admin token, GET /admin/v1/accounts/default/keys', { authorization: `Bearer ${token}` }, '/admin/v1/accounts/default/keys'],
    ] as const) {
      const times: number[] = [];
      for (let i = 0; i < reads; i++) {
        const start = performance.now();
        const response = await t.app.inject({ method: 'GET', url, headers });
        times.push(performance.now() - start);
        if (response.statusCode !== 200) throw new Error(`${name}: ${response.statusCode}`);
      }
      console.log(`${name} (SQLite, app.inject): ${summary(times)}`);
    }

    const start = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: burst }, (_, i) => t.app.inject({ method: 'POST', url: '/admin/v1/session', payload: { email: 'owner@example.com', password: PASSWORD }, remoteAddress: `192.0.2.${i % 250}` }).then((r) => r.statusCode)),
    );
    const count = (status: number) => statuses.filter((s) => s === status).length;
    console.log(`${burst} concurrent logins: ${count(200)} checked (200), ${count(429)} refused at once (429), in ${Math.round(performance.now() - start)} ms`);
  } finally {
    await t.app.close();
  }
}

void main();
