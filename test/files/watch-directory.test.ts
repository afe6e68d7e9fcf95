import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { watchDirectory, watchFiles, type FileWatcher } from '../../src/files/watch.js';

let dir: string;
let watcher: FileWatcher | undefined;
const yaml = (name: string) => name.endsWith('.yaml');

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'watch-'));
});
afterEach(() => {
  watcher?.close();
  vi.useRealTimers();
  rmSync(dir, { recursive: true, force: true });
});

describe('watchDirectory', () => {
  it.each([
    ['a new file', () => writeFileSync(join(dir, 'b.yaml'), 'b')],
    ['a deleted file', () => rmSync(join(dir, 'a.yaml'))],
    ['a changed file', () => writeFileSync(join(dir, 'a.yaml'), 'a, longer')],
    ['a file renamed into place', () => {
      writeFileSync(join(dir, 'a.tmp'), 'replacement');
      renameSync(join(dir, 'a.tmp'), join(dir, 'a.yaml'));
    }],
  ])('reports %s', async (_name, change) => {
    writeFileSync(join(dir, 'a.yaml'), 'a');
    const onChange = vi.fn();
    watcher = await watchDirectory(dir, yaml, onChange, 1000);
    await watcher.check();
    expect(onChange).not.toHaveBeenCalled();
    change();
    await watcher.check();
    expect(onChange).toHaveBeenCalledExactlyOnceWith(dir);
  });

  it('ignores files the filter leaves out', async () => {
    const onChange = vi.fn();
    watcher = await watchDirectory(dir, yaml, onChange, 1000);
    writeFileSync(join(dir, 'schema.json'), '{}');
    await watcher.check();
    expect(onChange).not.toHaveBeenCalled();
  });

  it('reports the directory appearing and disappearing', async () => {
    const inner = join(dir, 'rules');
    const onChange = vi.fn();
    watcher = await watchDirectory(inner, yaml, onChange, 1000);
    mkdirSync(inner);
    await watcher.check();
    expect(onChange).toHaveBeenCalledTimes(1);
    rmSync(inner, { recursive: true });
    await watcher.check();
    expect(onChange).toHaveBeenCalledTimes(2);
  });

  it('polls on its interval, under fake timers', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const onChange = vi.fn();
    watcher = await watchDirectory(dir, yaml, onChange, 1000);
    writeFileSync(join(dir, 'new.yaml'), 'x');
    vi.advanceTimersByTime(1000);
    // The tick started a pass that stats real files: wait for that I/O, not for time to pass.
    await vi.waitFor(() => expect(onChange).toHaveBeenCalledExactlyOnceWith(dir));
  });
});

describe('watchFiles keeps its behaviour', () => {
  it('reports a file that appears', async () => {
    const path = join(dir, 'x.txt');
    const onChange = vi.fn();
    watcher = await watchFiles([path], onChange, 1000);
    writeFileSync(path, 'x');
    await watcher.check();
    expect(onChange).toHaveBeenCalledExactlyOnceWith(path);
  });
});

describe('a callback that throws', () => {
  it('does not stop the watcher, and the change it failed on is handled again', async () => {
    writeFileSync(join(dir, 'a.yaml'), 'a');
    const onChange = vi.fn().mockRejectedValueOnce(new Error('boom')).mockImplementationOnce(() => {
      throw new Error('boom, synchronously');
    });
    watcher = await watchDirectory(dir, yaml, onChange, 1000);
    writeFileSync(join(dir, 'a.yaml'), 'changed');
    await watcher.check();
    await watcher.check();
    await watcher.check();
    expect(onChange).toHaveBeenCalledTimes(3);
    await watcher.check();
    expect(onChange).toHaveBeenCalledTimes(3); // handled at the third call: seen now

    writeFileSync(join(dir, 'b.yaml'), 'new');
    await watcher.check();
    expect(onChange).toHaveBeenCalledTimes(4);
  });
});
