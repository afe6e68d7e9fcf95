import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sourcesAt, startOrigin, type Origin } from './origin.js';

/**
 * `npm run data:update` where users run it: the Docker image's layout (package.json, the compiled
 * `dist/`, production dependencies only; no tsx, no TypeScript, no src), against sources on
 * 127.0.0.1 reached through an HTTP proxy on 127.0.0.1, both started here.
 *
 * The layout is built for real: `tsc -p tsconfig.build.json` into a temporary `dist/`, and a
 * `node_modules` holding exactly the packages package-lock.json does not mark as dev (what
 * `npm ci --omit=dev` installs), linked from this checkout. The job runs with
 * `--preserve-symlinks`, so a package finds its dependencies in that pruned tree, as in the image,
 * and not beside the real files.
 */

const run = promisify(execFile);

let root: string;
let app: string;
let origin: Origin;
let proxy: Server;
let proxyUrl: string;
/** What the proxy was asked to fetch: absolute-form request targets, or CONNECT authorities. */
const proxied: string[] = [];

/** A forward proxy as corporate networks run them: absolute-form requests, and CONNECT tunnels. */
async function startProxy(): Promise<Server> {
  const server = createServer((req, res) => {
    proxied.push(`${req.method} ${req.url}`);
    const upstream = request(req.url!, { method: req.method, headers: { ...req.headers, via: '1.1 test-proxy' } }, (answer) => {
      res.writeHead(answer.statusCode!, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => {
      res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  server.on('connect', (req, socket, head) => {
    proxied.push(`CONNECT ${req.url}`);
    const [host, port] = req.url!.split(':');
    const tunnel = connect(Number(port), host!, () => {
      socket.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      tunnel.write(head);
      tunnel.pipe(socket).pipe(tunnel);
    });
    tunnel.on('error', () => socket.destroy());
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return server;
}

/** Production dependencies only, as `npm ci --omit=dev` would install them, into `app`'s node_modules. */
function linkProductionDependencies(into: string): string[] {
  const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as { packages: Record<string, { dev?: boolean; devOptional?: boolean }> };
  const linked: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (!path.startsWith('node_modules/') || entry.dev || entry.devOptional) continue;
    // A nested package lives inside its parent's directory, which is linked whole.
    if (path.includes('/node_modules/', 'node_modules/'.length)) continue;
    mkdirSync(dirname(join(into, path)), { recursive: true });
    symlinkSync(resolve(path), join(into, path), 'dir');
    linked.push(path.slice('node_modules/'.length));
  }
  return linked;
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'risk-image-'));
  app = join(root, 'app');
  mkdirSync(app);
  await run(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json', '--outDir', join(app, 'dist')]);
  copyFileSync('package.json', join(app, 'package.json'));
  linkProductionDependencies(app);
  origin = await startOrigin();
  proxy = await startProxy();
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
}, 240_000);

afterAll(async () => {
  await origin?.close();
  await new Promise<void>((done) => (proxy ? proxy.close(() => done()) : done()));
  rmSync(root, { recursive: true, force: true });
});

/** `npm run data:update` in the image layout, with nothing from this checkout's environment but PATH. */
async function dataUpdate(env: Record<string, string>): Promise<{ code: number; stdout: string; stderr: string }> {
  return run('npm', ['run', '--silent', 'data:update'], {
    cwd: app,
    env: { PATH: process.env.PATH, HOME: root, NODE_OPTIONS: '--preserve-symlinks', ...env },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, stdout: e.stdout, stderr: e.stderr }),
  );
}

describe('npm run data:update from the built image layout', () => {
  it('has what the image has, and nothing from development', () => {
    expect(existsSync(join(app, 'dist/cli/data-update.js'))).toBe(true);
    expect(existsSync(join(app, 'node_modules/undici'))).toBe(true);
    for (const devOnly of ['tsx', 'typescript', 'vitest', 'fast-check']) expect(existsSync(join(app, 'node_modules', devOnly)), devOnly).toBe(false);
    expect(existsSync(join(app, 'src'))).toBe(false);
  });

  it('fetches every source through HTTP_PROXY, retries the one that fails once, and writes DATA_DIR', async () => {
    const dataDir = join(root, 'data-proxied');
    const result = await dataUpdate({
      ...sourcesAt(origin.base),
      DATA_UPDATE_TOR_URL: `${origin.base}/tor-flaky`,
      DATA_UPDATE_MAXMIND_EDITIONS: 'GeoLite2-City',
      DATA_UPDATE_RETRY_DELAY_MS: '0',
      DATA_DIR: dataDir,
      HTTP_PROXY: proxyUrl,
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(`proxy for http 127.0.0.1:${new URL(proxyUrl).port}, for https 127.0.0.1:${new URL(proxyUrl).port}`);
    expect(result.stdout).toMatch(/retry +.*\/tor-flaky: HTTP 503: attempt 2 of 3/);
    expect(result.stdout).toContain('17 updated, 0 failed, 0 skipped');
    expect(await readFile(join(dataDir, 'tor-exit-nodes.txt'), 'utf8')).toBe('185.220.101.1\n');
    expect(readFileSync(join(dataDir, 'datacenter-ranges.txt'), 'utf8')).toContain('\n173.245.48.0/20\n');
    expect(existsSync(join(dataDir, 'GeoLite2-City.mmdb'))).toBe(true);

    // Every request reached the sources through the proxy, and the proxy saw each one.
    expect(origin.requested.length).toBeGreaterThanOrEqual(10);
    expect(origin.requested.filter((r) => r.via !== '1.1 test-proxy')).toEqual([]);
    const proxiedPaths = proxied.map((p) => new URL(p.split(' ')[1]!).pathname);
    expect(proxiedPaths.sort()).toEqual(origin.requested.map((r) => r.path).sort());
  });

  it('goes direct to the hosts NO_PROXY names', async () => {
    origin.requested.length = 0;
    proxied.length = 0;
    const result = await dataUpdate({
      ...sourcesAt(origin.base),
      DATA_UPDATE_MAXMIND_EDITIONS: 'GeoLite2-City',
      DATA_DIR: join(root, 'data-direct'),
      HTTP_PROXY: proxyUrl,
      NO_PROXY: '127.0.0.1',
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('17 updated, 0 failed, 0 skipped');
    expect(origin.requested.length).toBeGreaterThanOrEqual(10);
    expect(origin.requested.filter((r) => r.via !== undefined)).toEqual([]);
    expect(proxied).toEqual([]);
  });
});
