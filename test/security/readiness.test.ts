import { symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * Finding 10 of issue 11: the unauthenticated `/readyz` showed every source's file path, entry
 * count, refusal message and the process's memory, and a data file symlinked to /etc/passwd had
 * its first lines there. Public readiness says ready or not, and what it runs without (the store:
 * test/faults/store-down.test.ts); the details stay in-process (`app.sources()`) and in the log.
 */

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

describe('GET /readyz', () => {
  it('says ready, and what it runs without, and nothing else, even with a data file that points at /etc/passwd', async () => {
    t = await startTestApp();
    const dir = t.config.dataDir;
    await symlink('/etc/passwd', join(dir, 'tor-exit-nodes.txt'));
    await symlink('/etc/passwd', join(dir, 'GeoLite2-City.mmdb'));
    await writeFile(join(dir, 'datacenter-ranges.txt'), '198.51.100.0/24\n203.0.113.0/24\n');
    await t.app.close();
    // Built again, so the files are read at start, as an operator's would be.
    t = await startTestApp({ DATA_DIR: dir });

    // In-process, the details are all there: the refusals name the files.
    const sources = Object.fromEntries(t.app.sources().map((s) => [s.name, s]));
    expect(sources['ip.list.tor']?.error).toContain(join(dir, 'tor-exit-nodes.txt'));
    expect(sources['ip.maxmind.city']?.error).toContain(join(dir, 'GeoLite2-City.mmdb'));
    expect(sources['ip.list.datacenter']).toMatchObject({ loaded: true, entries: 2 });

    const response = await t.app.inject('/readyz');
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ready', unavailable: [] });
    // No path, no file content, no count, no memory figure: nothing but the word.
    expect(response.body).not.toMatch(/root|passwd|\/|\d/);
  });
});
