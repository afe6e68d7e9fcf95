import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * A static reading of the Dockerfile (no Docker engine runs here): the image that ships is Node 24
 * LTS pinned by digest, runs as a non-root user, holds production dependencies only, and carries
 * what the data job needs.
 */
interface Stage {
  name: string | undefined;
  /** The image or stage it starts from. */
  from: string;
  instructions: { keyword: string; args: string }[];
}

/** Stages and their instructions; continuation lines joined, comments and parser directives dropped. */
function parseDockerfile(text: string): Stage[] {
  const logical = text
    .replace(/\\\r?\n/g, ' ')
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l.length > 0 && !l.startsWith('#'));
  const stages: Stage[] = [];
  for (const line of logical) {
    const [, keyword = '', args = ''] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    if (keyword.toUpperCase() === 'FROM') {
      const from = args.split(/\s+/).find((word) => !word.startsWith('--'))!;
      stages.push({ name: /\bAS\s+(\S+)\s*$/i.exec(args)?.[1], from, instructions: [] });
    } else {
      stages.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), args });
    }
  }
  return stages;
}

const isRoot = (user: string) => /^(root|0)(:.*)?$/.test(user.trim());
/** `npm ci`/`npm install` that installs dev dependencies (no `--omit=dev`, `--production` or NODE_ENV=production). */
const installsDevDependencies = (run: string) =>
  /\bnpm\s+(ci|install|i)\b/.test(run) && !/--omit[= ]dev\b|--production\b|--only[= ]prod(uction)?\b|NODE_ENV=production/.test(run);

const stages = parseDockerfile(readFileSync('Dockerfile', 'utf8'));
const final = stages.at(-1)!;

/** The image a stage ends up on, following `FROM <earlier stage>`. */
function baseImage(stage: Stage, all: Stage[] = stages): string {
  const earlier = all.find((s) => s.name === stage.from);
  return earlier && earlier !== stage ? baseImage(earlier, all) : stage.from;
}
const PINNED_NODE_24 = /^node:24(?:[.-][\w.-]*)?@sha256:[0-9a-f]{64}$/;

describe('Dockerfile', () => {
  it('builds every stage on Node.js 24 LTS, pinned by digest', () => {
    for (const stage of stages) {
      expect(baseImage(stage), stage.name ?? 'final').toMatch(PINNED_NODE_24);
    }
  });

  it('ships what the service and the data job run: dist, package.json and the rules', () => {
    const copies = final.instructions.filter((i) => i.keyword === 'COPY').map((i) => i.args);
    expect(copies.some((c) => /--from=build\b.*\/app\/dist\s+\.\/dist$/.test(c))).toBe(true);
    expect(copies.some((c) => /\bpackage\.json\s+\.\/$/.test(c))).toBe(true);
    expect(copies.some((c) => /\brules\s+\/rules$/.test(c))).toBe(true);
    expect(final.instructions.find((i) => i.keyword === 'HEALTHCHECK')?.args).toContain('/readyz');
  });

  it('has a build stage separate from the final one', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
  });

  it('runs the final stage as a non-root user', () => {
    const users = final.instructions.filter((i) => i.keyword === 'USER').map((i) => i.args);
    expect(users.length).toBeGreaterThan(0);
    expect(isRoot(users.at(-1)!)).toBe(false);
    // Nothing after the last USER switches back to root through the instructions that can.
    const afterUser = final.instructions.slice(final.instructions.findLastIndex((i) => i.keyword === 'USER') + 1);
    expect(afterUser.filter((i) => i.keyword === 'RUN' && /\b(sudo|su)\b/.test(i.args))).toEqual([]);
  });

  it('installs no dev dependencies in the final stage', () => {
    const runs = final.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
    expect(runs.filter(installsDevDependencies)).toEqual([]);
  });

  it('copies node_modules into the final stage only from a stage that installed production dependencies', () => {
    const copies = final.instructions.filter((i) => i.keyword === 'COPY' || i.keyword === 'ADD');
    const fromStages = copies.flatMap((c) => {
      const from = /--from=(\S+)/.exec(c.args)?.[1];
      return from ? [{ from, args: c.args }] : [];
    });
    const moduleCopies = fromStages.filter((c) => /node_modules/.test(c.args));
    expect(moduleCopies.length).toBeGreaterThan(0);
    for (const copy of moduleCopies) {
      const source = stages.find((s) => s.name === copy.from);
      expect(source, `stage ${copy.from}`).toBeDefined();
      const installs = source!.instructions.filter((i) => i.keyword === 'RUN' && /\bnpm\s+(ci|install|i)\b/.test(i.args));
      expect(installs.length).toBeGreaterThan(0);
      expect(installs.filter((i) => installsDevDependencies(i.args))).toEqual([]);
    }
    // The build context and the build stage's output may bring code, never a node_modules with dev tools.
    for (const copy of copies.filter((c) => !/--from=/.test(c.args))) expect(copy.args).not.toMatch(/node_modules|^\.\s|\s\.\s+\.$/);
  });

  it('the parser reads a root final stage, a dev install and an unpinned base as such', () => {
    const bad = parseDockerfile('FROM node AS build\nRUN npm ci\nFROM node\nCOPY --from=build /app/node_modules ./node_modules\nUSER node\nUSER 0:0\n');
    expect(isRoot(bad.at(-1)!.instructions.filter((i) => i.keyword === 'USER').at(-1)!.args)).toBe(true);
    expect(installsDevDependencies(bad[0]!.instructions[0]!.args)).toBe(true);
    expect(installsDevDependencies('npm ci --omit=dev --ignore-scripts')).toBe(false);
    const unpinned = parseDockerfile('FROM node:24-bookworm-slim AS node\nFROM node AS build\nFROM build\n');
    expect(baseImage(unpinned[2]!, unpinned)).toBe('node:24-bookworm-slim');
    expect(baseImage(unpinned[2]!, unpinned)).not.toMatch(PINNED_NODE_24);
    expect('node:20-bookworm-slim@sha256:' + 'a'.repeat(64)).not.toMatch(PINNED_NODE_24);
  });

  it('starts the service with a bounded heap, as `npm start` does (README "Running in Docker")', () => {
    const cmd = final.instructions.filter((i) => i.keyword === 'CMD').at(-1)!;
    const flags = ['--max-old-space-size=224', '--max-semi-space-size=8', '--heap-growing-percent=100'];
    expect(JSON.parse(cmd.args)).toEqual(['node', ...flags, 'dist/server.js']);
    const scripts = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> }).scripts;
    expect(scripts.start).toBe(`node ${flags.join(' ')} dist/server.js`);
    // The soak measures the service as it runs in production.
    expect(scripts.soak!.startsWith(`node ${flags.join(' ')} `)).toBe(true);
  });
});
