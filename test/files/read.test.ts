import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readBounded, readBoundedText, readLines } from '../../src/files/read.js';
import { HOSTILE_FILES, hostileFile } from '../support/hostile-files.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'read-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const readers = {
  readBounded: (path: string, max: number) => readBounded(path, max),
  readLines: (path: string, max: number) => readLines(path, max, () => undefined),
};

describe.each(Object.entries(readers))('%s refuses what is not a bounded regular file', (_reader, read) => {
  it.each(HOSTILE_FILES)('%s', async (kind, reason) => {
    const path = hostileFile(kind, join(dir, 'file'));
    await expect(read(path, 1024 * 1024)).rejects.toMatchObject({ name: 'FileLimitError', message: expect.stringMatching(reason) });
  });

  it('a file over the cap by one byte', async () => {
    writeFileSync(join(dir, 'big'), 'x'.repeat(101));
    await expect(read(join(dir, 'big'), 100)).rejects.toThrow('larger than 100 bytes');
  });

  it('a /proc file, whose size reads 0, past the cap', async () => {
    await expect(read('/proc/self/status', 16)).rejects.toThrow('larger than 16 bytes');
  });

  it('a missing file, with the system error', async () => {
    await expect(read(join(dir, 'missing'), 100)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('readBounded and readBoundedText', () => {
  it('read a file at the cap whole, through a symlink', async () => {
    writeFileSync(join(dir, 'exact'), 'é'.repeat(50));
    symlinkSync(join(dir, 'exact'), join(dir, 'link'));
    expect((await readBounded(join(dir, 'link'), 100)).bytes.length).toBe(100);
    expect((await readBoundedText(join(dir, 'link'), 100)).text).toBe('é'.repeat(50));
  });

  it('read a /proc file, whose size reads 0, to its end', async () => {
    expect((await readBoundedText('/proc/self/status', 1024 * 1024)).text).toMatch(/^Name:/);
  });
});

describe('readLines', () => {
  const linesOf = async (text: string) => {
    writeFileSync(join(dir, 'list'), text);
    const lines: string[] = [];
    await readLines(join(dir, 'list'), 1024 * 1024, (line, number) => void lines.push(`${number}:${line}`));
    return lines;
  };

  it('gives the lines split("\\n") gives, numbered', async () => {
    expect(await linesOf('a\nb\r\n\nc')).toEqual(['1:a', '2:b\r', '3:', '4:c']);
    expect(await linesOf('a\n')).toEqual(['1:a', '2:']);
  });

  it('keeps lines and characters whole across its 64 KiB reads', async () => {
    const line = `${'é'.repeat(1000)}x`;
    const lines = await linesOf(Array(200).fill(line).join('\n'));
    expect(lines).toHaveLength(200);
    expect(lines.every((l, i) => l === `${i + 1}:${line}`)).toBe(true);
  });

  it('gives a line longer than several reads whole, then the lines after it', async () => {
    const long = 'x'.repeat(300_000);
    expect(await linesOf(`a\n${long}\nb\n${long}`)).toEqual(['1:a', `2:${long}`, '3:b', `4:${long}`]);
  });

  it('stops when the callback says so', async () => {
    writeFileSync(join(dir, 'list'), 'a\nb\nc\n');
    const seen: string[] = [];
    await readLines(join(dir, 'list'), 100, (line) => {
      seen.push(line);
      return line !== 'b';
    });
    expect(seen).toEqual(['a', 'b']);
  });
});
