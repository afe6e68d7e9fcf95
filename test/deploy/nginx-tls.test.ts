import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, fetch } from 'undici';
import { afterAll, describe, expect, it } from 'vitest';
import { createUser, PASSWORD } from '../support/admin.js';
import { evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { startNginx, type Nginx } from '../support/nginx.js';

/**
 * The TLS variant of the deployment example with real components: Debian's nginx runs
 * deploy/nginx.conf with deploy/nginx-tls.conf in the place deploy/compose.tls.yaml mounts it, on a
 * certificate made by the openssl command written at the top of that file (run as written, only the
 * folder replaced), in front of the real app. Over https the console's session cookie is Secure
 * (nginx sends X-Forwarded-Proto, the service trusts it); over plain HTTP it is not.
 */

const TLS_CONFIG = 'deploy/nginx-tls.conf';

/** The documented command: the comment lines from `openssl` to the first line not ending in `\`. */
function documentedOpensslCommand(): string {
  const lines = readFileSync(TLS_CONFIG, 'utf8').split('\n').map((l) => l.replace(/^#\s*/, ''));
  const start = lines.findIndex((l) => l.startsWith('openssl req '));
  expect(start, `${TLS_CONFIG} documents an openssl command`).toBeGreaterThanOrEqual(0);
  const command: string[] = [];
  for (const line of lines.slice(start)) {
    command.push(line.replace(/\\$/, '').trim());
    if (!line.endsWith('\\')) break;
  }
  return command.join(' ');
}

let app: TestApp;
let nginx: Nginx;
let certificate: string;

/** nginx polls itself ready with expect.poll, which only runs inside a test: started by the first one. */
let started: Promise<void> | undefined;
const ready = () => (started ??= start());

async function start(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'risk-tls-'));
  const command = documentedOpensslCommand();
  expect(command).toContain('deploy/tls/key.pem');
  execFileSync('sh', ['-c', command.replaceAll('deploy/tls/', `${dir}/`)], { stdio: 'ignore' });
  certificate = readFileSync(join(dir, 'cert.pem'), 'utf8');

  app = await startTestApp({ TRUST_PROXY: '127.0.0.1' });
  await createUser(app.app.store, 'owner@example.com', { owner: true });
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.app.server.address() as AddressInfo).port;
  nginx = await startNginx([port, port], { tls: { cert: join(dir, 'cert.pem'), key: join(dir, 'key.pem') } });
}

afterAll(async () => {
  await nginx?.stop();
  await app?.app.close();
});

describe('nginx with listen 443 ssl (deploy/nginx-tls.conf)', { timeout: 60_000 }, () => {
  const trusting = () => new Agent({ connect: { ca: certificate } });
  const logIn = (origin: string, dispatcher?: Agent) => fetch(`${origin}/admin/v1/session`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'owner@example.com', password: PASSWORD }), dispatcher,
  });

  it('serves the service over TLS with the certificate the documented command makes (verified, for 127.0.0.1)', async () => {
    await ready();
    const dispatcher = trusting();
    try {
      const health = await fetch(`${nginx.tlsUrl}/healthz`, { dispatcher });
      expect(health.status).toBe(200);
      const evaluation = await fetch(`${nginx.tlsUrl}/v1/risk/evaluate`, {
        method: 'POST', headers: { authorization: `Bearer ${KEY_A}`, 'content-type': 'application/json' }, body: JSON.stringify(evaluationBody()), dispatcher,
      });
      expect(evaluation.status).toBe(200);
      // Metrics never go through the balancer, on either server.
      expect((await fetch(`${nginx.tlsUrl}/metrics`, { dispatcher })).status).toBe(404);
    } finally {
      await dispatcher.close();
    }
    // Without the certificate as a trust anchor the connection is refused: it is TLS, not plain HTTP on 443.
    await expect(fetch(`${nginx.tlsUrl}/healthz`)).rejects.toThrow();
  });

  it('makes the console\'s session cookie Secure over https, and not over plain HTTP', async () => {
    await ready();
    const dispatcher = trusting();
    try {
      const secure = await logIn(nginx.tlsUrl!, dispatcher);
      expect(secure.status).toBe(200);
      expect(secure.headers.getSetCookie().join('\n')).toMatch(/;\s*Secure/i);
    } finally {
      await dispatcher.close();
    }
    const plain = await logIn(nginx.url);
    expect(plain.status).toBe(200);
    expect(plain.headers.getSetCookie().join('\n')).not.toMatch(/;\s*Secure/i);
  });
});
