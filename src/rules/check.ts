import { readRuleDirectory } from './directory.js';
import { formatProblem } from './rule-file.js';

/** What `npm run rules:check` reports about a directory: one line per file or problem. */
export async function checkRuleDirectory(dir: string): Promise<{ ok: boolean; lines: string[] }> {
  const result = await readRuleDirectory(dir);
  if (result.error !== undefined) return { ok: false, lines: [`error: ${result.error}`] };
  if (result.files.length === 0) return { ok: false, lines: [`error: no rule files (<event_type>.yaml) in ${dir}`] };
  const lines = result.files.flatMap((f) =>
    f.ruleSet ? [`ok    ${f.file} (${f.eventType}: ${f.ruleSet.rules.length} rules)`] : f.problems.map((p) => `error ${formatProblem(p)}`),
  );
  return { ok: result.files.every((f) => f.ruleSet !== undefined), lines };
}
