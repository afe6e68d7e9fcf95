import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIELD_PATHS } from '../../src/rules/fields.js';
import { LIBRARY } from '../../src/rules/library.js';
import { formatProblem, parseRuleFile } from '../../src/rules/rule-file.js';

const doc = readFileSync('docs/rules.md', 'utf8');
// Rule files and excerpts of a file's `rules:` list; a block of comments only is not an example.
const yamlBlocks = [...doc.matchAll(/```yaml\n([\s\S]*?)```/g)].map((m) => m[1]!).filter((b) => /^(rules:|\s*- )/m.test(b));

describe('docs/rules.md', () => {
  it('has examples the loader accepts', () => {
    expect(yamlBlocks.length).toBeGreaterThanOrEqual(4);
    for (const block of yamlBlocks) {
      // A block that is a list of rules is an excerpt of a file's `rules:`.
      const text = block.trimStart().startsWith('- ') ? `rules:\n${block}` : block;
      const parsed = parseRuleFile('docs', 'docs/rules.md', text);
      expect('problems' in parsed ? parsed.problems.map(formatProblem) : [], block).toEqual([]);
    }
  });

  it('lists every library rule with its name and default score', () => {
    for (const rule of LIBRARY) {
      expect(doc).toContain(`| \`${rule.id}\` | ${rule.name} |`);
      expect(doc).toMatch(new RegExp(`\\| \`${rule.id}\` \\|[^\\n]*\\| ${rule.defaultScore} \\|`));
    }
  });

  it('lists every field', () => {
    for (const path of FIELD_PATHS) expect(doc).toContain(`| \`${path}\` |`);
  });
});
