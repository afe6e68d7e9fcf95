import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';

/**
 * The tests' components that npm cannot install without root: each is a Debian package, found where
 * Debian puts it, and the support module whose import marks a test file as needing it. Everything
 * else the suite uses comes with `npm ci` (PostgreSQL's own binaries included:
 * test/support/postgres.ts). `.ci/run` installs every package named here.
 */
export const REQUIREMENTS = [
  { debianPackage: 'chromium', module: 'support/browser.js', present: () => existsSync('/usr/bin/chromium') },
  { debianPackage: 'nginx', module: 'support/nginx.js', present: () => existsSync('/usr/sbin/nginx') },
  { debianPackage: 'python3', module: 'support/python.js', present: () => existsSync('/usr/bin/python3') },
  {
    // No npm parser of the text format keeps a labelled histogram's series apart (see prometheus.ts).
    debianPackage: 'python3-prometheus-client',
    module: 'support/prometheus.js',
    present: () => {
      try {
        execFileSync('/usr/bin/python3', ['-c', 'import prometheus_client.parser'], { stdio: 'ignore' });
        return true;
      } catch {
        return false;
      }
    },
  },
] as const;

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/**
 * The test files to leave out because a package they need is missing, each said in one line naming
 * the package. With CI=true none is left out: the file runs and fails on the missing component, so
 * a CI run cannot pass by skipping.
 */
export function filesLackingPackages(root: string, env: NodeJS.ProcessEnv = process.env, log: (line: string) => void = console.warn): string[] {
  const missing = REQUIREMENTS.filter((r) => !r.present());
  if (missing.length === 0 || env.CI === 'true') return [];
  const skipped: string[] = [];
  for (const file of testFiles(join(root, 'test'))) {
    const source = readFileSync(file, 'utf8');
    const lacking = missing.filter((r) => source.includes(`/${r.module}'`));
    if (lacking.length === 0) continue;
    const name = relative(root, file);
    skipped.push(name);
    log(`skipped ${name}: needs ${lacking.map((r) => r.debianPackage).join(', ')} (apt-get install ${lacking.map((r) => r.debianPackage).join(' ')}; with CI=true this is a failure)`);
  }
  return skipped;
}
