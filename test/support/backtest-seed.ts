import Sqlite from 'better-sqlite3';
import { expect } from 'vitest';
import { firstIdAt } from '../../src/store/log-record.js';
import { login, type Session } from './admin.js';
import { evaluationBody } from './app.js';
import type { ConsoleServer } from './console.js';

/**
 * What a backtest of `acme`'s account_register needs, made as a user would: a key through the
 * admin API, six sign-ups through the public API with it (three from example.org, three from
 * example.com; all approved live), the first of each labelled (fraud, legit), and a draft that
 * adds ADDED_RULE (example.org: 40 points, a decline) through the admin API.
 */
export const ADDED_RULE = { id: 'example_org', name: 'Sign-up from example.org', score: 40, when: { field: 'email.domain', equals: 'example.org' } };
export const EVENTS = '/admin/v1/accounts/acme/rule-sets/account_register';

export interface BacktestSeed {
  owner: Session;
  /** The API key of `acme`. */
  key: string;
  /** Evaluation ids by e-mail domain, oldest first. */
  made: { org: string[]; com: string[] };
}

export async function seedBacktest(server: ConsoleServer, ownerEmail: string): Promise<BacktestSeed> {
  const owner = await login(server.app, ownerEmail);
  const key = await server.app.inject({ method: 'POST', url: '/admin/v1/accounts/acme/keys', headers: owner.write });
  expect(key.statusCode, key.body).toBe(201);
  const made: BacktestSeed['made'] = { org: [], com: [] };
  for (let n = 0; n < 6; n += 1) {
    const domain = n % 2 === 0 ? 'org' : 'com';
    made[domain].push(await evaluate(server, key.json().key, n, `user${n}@example.${domain}`));
  }
  for (const [id, label] of [[made.org[0]!, 'fraud'], [made.com[0]!, 'legit']] as const) {
    const labelled = await server.app.inject({ method: 'PUT', url: `/admin/v1/accounts/acme/decisions/${id}/label`, headers: owner.write, payload: { label } });
    expect(labelled.statusCode, labelled.body).toBe(200);
  }
  const draft = await server.app.inject({ method: 'POST', url: `${EVENTS}/draft/rules`, headers: owner.write, payload: { rule: ADDED_RULE, comment: 'Decline example.org' } });
  expect(draft.statusCode, draft.body).toBe(201);
  return { owner, key: key.json().key, made };
}

/** A sign-up of `email` from address 203.0.113.<n + 1> through the public API, approved live, and logged; its evaluation id. */
export async function evaluate(server: ConsoleServer, key: string, n: number, email: string): Promise<string> {
  const answer = await fetch(`${server.origin}/v1/risk/evaluate`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(evaluationBody({ ip: `203.0.113.${n + 1}`, email })),
  });
  expect(answer.status).toBe(200);
  const body = (await answer.json()) as { id: string; score: { state: string } };
  expect(body.score.state).toBe('approve');
  await server.store.log.flush();
  return body.id;
}

/**
 * `rows` copies of one logged evaluation (`template`, of any account) into `account`'s log, over
 * the last hour, by bulk insert into the SQLite file the service uses (as bench/backtest.ts fills
 * it): a log long enough that a backtest of it is still running when a user cancels it.
 */
export function fillLog(server: ConsoleServer, account: string, template: string, rows: number): void {
  const { database } = server.store.engine;
  if (database.engine !== 'sqlite') throw new Error('fillLog writes a SQLite file');
  const db = new Sqlite(database.path);
  try {
    const row = db.prepare('select * from evaluations where id = ?').get(template) as Record<string, unknown>;
    const columns = Object.keys(row);
    const insert = db.prepare(`insert into evaluations (${columns.join(', ')}) values (${columns.map((c) => `@${c}`).join(', ')})`);
    const now = Date.now();
    db.transaction(() => {
      for (let i = 0; i < rows; i += 1) {
        const at = now - 3_600_000 + Math.floor((i / rows) * 3_000_000);
        const id = `${firstIdAt(at).slice(0, 14)}7${(i & 0xfff).toString(16).padStart(3, '0')}-8${((i >>> 12) & 0xfff).toString(16).padStart(3, '0')}-${i.toString(16).padStart(12, '0')}`;
        insert.run({ ...row, id, account_id: account, evaluated_at: at });
      }
    })();
  } finally {
    db.close();
  }
}
