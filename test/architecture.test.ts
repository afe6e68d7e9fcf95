import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The layers of `src/`, bottom up (README "Architecture"). A unit is a folder `src/<name>/` or a
 * file directly in `src/`. A unit imports only units of lower layers: never one of its own layer,
 * never one above. Type-only imports count too: a type names what a module depends on.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['core', 'config', 'version.ts', 'logger.ts', 'log-for-people.ts'],
  ['dns', 'files'],
  ['email', 'ip', 'keys'],
  ['request'],
  ['history', 'lists'],
  ['rules'],
  ['evaluation'],
  ['store'],
  ['http', 'backtest', 'data-update', 'webhooks'],
  ['metrics'],
  ['admin'],
  ['openapi.ts'],
  ['app.ts'],
  ['server.ts', 'cli'],
];

const SRC = resolve('src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.tsx?$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** `src/<name>/…` is unit `<name>`; a file directly in `src/` is its own unit. */
const unitOf = (file: string) => relative(SRC, file).split(sep)[0]!;

/** Every import of the project a file makes: static, dynamic, re-exports, and workers' `new URL('./x.js', import.meta.url)`. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = ts.preProcessFile(text, true, true).importedFiles.map((f) => f.fileName);
  for (const match of text.matchAll(/new URL\(\s*[`'"](\.[^`'"$]+)/g)) specifiers.push(match[1]!);
  return specifiers
    .filter((s) => s.startsWith('.'))
    // Imports name the compiled file (`./x.js`); the unit is the source's (`x.ts`).
    .map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts'))
    .filter((target) => target.startsWith(SRC + sep));
}

function violations(layers: readonly (readonly string[])[]) {
  const layerOf = new Map(layers.flatMap((units, i) => units.map((unit) => [unit, i] as const)));
  const unplaced = new Set<string>();
  const upward: string[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = unitOf(file);
    if (!layerOf.has(from)) unplaced.add(from);
    for (const target of importsOf(file)) {
      const to = unitOf(target);
      if (to === from) continue;
      if (!layerOf.has(to)) unplaced.add(to);
      else if (layerOf.has(from) && layerOf.get(to)! >= layerOf.get(from)!) {
        upward.push(`${relative(SRC, file)} imports ${relative(SRC, target)} (${from}, layer ${layerOf.get(from)! + 1}, may import only layers below; ${to} is layer ${layerOf.get(to)! + 1})`);
      }
    }
  }
  return { unplaced: [...unplaced].sort(), upward };
}

describe('architecture: one-way layers in src/', () => {
  it('places every unit of src/ in a layer', () => {
    expect(violations(LAYERS).unplaced).toEqual([]);
  });

  it('has no import to the same layer or one above', () => {
    expect(violations(LAYERS).upward).toEqual([]);
  });

  it('has no two units that import each other', () => {
    const edges = new Set<string>();
    for (const file of sourceFiles(SRC)) {
      for (const target of importsOf(file)) if (unitOf(target) !== unitOf(file)) edges.add(`${unitOf(file)} ${unitOf(target)}`);
    }
    const pairs = [...edges].filter((e) => { const [a, b] = e.split(' '); return a! < b! && edges.has(`${b} ${a}`); });
    expect(pairs).toEqual([]);
  });

  it('catches an import that runs upward (the check itself)', () => {
    // rules/engine.ts reads the evaluation context from rules/; with rules placed above evaluation
    // the check must name evaluation's imports of rules as running up.
    const swapped = LAYERS.map((units) => units.includes('rules') ? ['evaluation'] : units.includes('evaluation') ? ['rules'] : units);
    expect(violations(swapped).upward.some((v) => v.startsWith(`evaluation${sep}`) && v.includes(`rules${sep}`))).toBe(true);
  });
});
