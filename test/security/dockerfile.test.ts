import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

/**
 * A static reading of the Dockerfile (no Docker engine runs here): the image that ships runs as
 * a non-root user and holds production dependencies only.
 */
interface Stage {
  name: string | undefined;
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
      stages.push({ name: /\bAS\s+(\S+)\s*$/i.exec(args)?.[1], instructions: [] });
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

describe('Dockerfile', () => {
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

  it('the parser reads a root final stage and a dev install as such', () => {
    const bad = parseDockerfile('FROM node AS build\nRUN npm ci\nFROM node\nCOPY --from=build /app/node_modules ./node_modules\nUSER node\nUSER 0:0\n');
    expect(isRoot(bad.at(-1)!.instructions.filter((i) => i.keyword === 'USER').at(-1)!.args)).toBe(true);
    expect(installsDevDependencies(bad[0]!.instructions[0]!.args)).toBe(true);
    expect(installsDevDependencies('npm ci --omit=dev --ignore-scripts')).toBe(false);
  });
});
