/**
 * Velocity counters' cost (issue 28), for `npm run bench`: a rules directory as shipped, with
 * account_register.yaml given `n` counters, each over one of the six keys and a window from ten
 * minutes to thirty days, and each its own series (its own event-type list), so `n` counters are
 * `n` reads and `n` counted cells per evaluation: the worst case for that number. A rule reads
 * every counter (never firing), so the rules read them as they would in production.
 */
import './temp-root.js';
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { VELOCITY_KEYS } from '../src/history/velocity.js';

const WINDOWS = ['10m', '1h', '24h', '7d', '30d'];

export function velocityRulesDir(root: string, counters: number): string {
  const dir = mkdtempSync(join(root, `velocity-${counters}-`));
  cpSync('rules', dir, { recursive: true });
  if (counters === 0) return dir;
  const lines = ['velocity:'];
  for (let i = 0; i < counters; i++) {
    lines.push(`  - name: c${i}`, `    key: ${VELOCITY_KEYS[i % VELOCITY_KEYS.length]}`, `    window: ${WINDOWS[i % WINDOWS.length]}`,
      `    event_types: [account_register, bench_${i}]`);
  }
  const shipped = readFileSync(join(dir, 'account_register.yaml'), 'utf8');
  const rule = [
    '  - id: velocity_bench',
    '    name: Velocity bench (never fires)',
    '    score: 1',
    '    when:',
    '      any:',
    ...Array.from({ length: counters }, (_, i) => `        - { field: velocity.c${i}, gte: 1000000000 }`),
  ];
  writeFileSync(join(dir, 'account_register.yaml'), `${lines.join('\n')}\n${shipped.trimEnd()}\n${rule.join('\n')}\n`);
  return dir;
}
