import { isAlias, isMap, isNode, isSeq, LineCounter, parseDocument, visit, type Alias, type Document, type Node } from 'yaml';
import { ruleFileSchema, type RuleFile } from './file-schema.js';
import { compileRuleSet, type RuleSet } from './rule-set.js';

/** One problem in a rule file: the file, the path inside it (`rules[2].when.field`) and, where known, the line. */
export interface RuleFileProblem {
  file: string;
  path: string;
  line: number | null;
  column: number | null;
  message: string;
}

export function formatProblem(p: RuleFileProblem): string {
  const where = p.line === null ? p.file : `${p.file}:${p.line}:${p.column}`;
  return `${where} ${p.path === '' ? '(file)' : p.path}: ${p.message}`;
}

/** A rule set that could not be loaded; the message lists every problem with file, line and path. */
export class RuleSetError extends Error {
  constructor(readonly problems: RuleFileProblem[]) {
    super(`Invalid rule set:\n${problems.map((p) => `  - ${formatProblem(p)}`).join('\n')}`);
    this.name = 'RuleSetError';
  }
}

/**
 * Parses and validates one rule file. YAML (a superset of JSON), so people can comment their scores
 * and errors can point at a line. Never throws: whatever the text holds is a problem reported
 * against the file, whether it was read from a directory, sent to the store or read back from it.
 */
export function parseRuleFile(eventType: string, file: string, text: string): { ruleSet: RuleSet; data: RuleFile } | { problems: RuleFileProblem[] } {
  try {
    return parse(eventType, file, text);
  } catch (error) {
    // A bug, not the file's fault; still reported against the file, never thrown at the caller.
    return { problems: [{ file, path: '', line: null, column: null, message: `cannot be loaded: ${(error as Error).message}` }] };
  }
}

function parse(eventType: string, file: string, text: string): { ruleSet: RuleSet; data: RuleFile } | { problems: RuleFileProblem[] } {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const at = (offset: number | undefined) => {
    if (offset === undefined) return { line: null, column: null };
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  if (doc.errors.length > 0) {
    return { problems: doc.errors.map((e) => ({ file, path: '', ...at(e.pos[0]), message: e.message.split('\n')[0]! })) };
  }
  let plain: unknown;
  try {
    plain = doc.toJS({ maxAliasCount: MAX_ALIAS_USES }) ?? {};
  } catch (error) {
    // The yaml package throws, rather than reports, an alias it cannot resolve or expand.
    const { alias, message } = aliasProblem(doc, error as Error);
    return { problems: [{ file, path: '', ...at(alias?.range?.[0]), message }] };
  }
  const parsed = ruleFileSchema.safeParse(plain);
  if (!parsed.success) {
    return {
      problems: parsed.error.issues.map((issue) => {
        // An unknown key is pointed at the key itself, not at the object holding it.
        const path = issue.code === 'unrecognized_keys' ? [...issue.path, issue.keys[0]!] : issue.path;
        return { file, path: formatPath(path), ...at(locate(doc, path as (string | number)[])), message: issue.message };
      }),
    };
  }
  return { ruleSet: compileRuleSet(eventType, file, parsed.data), data: parsed.data };
}

/**
 * Anchors and aliases (`&base`, `*base`) are YAML, so they are allowed, but each use of an alias
 * copies what it names: past this many uses a small file could expand into an enormous one.
 */
export const MAX_ALIAS_USES = 100;

/** Which alias broke `toJS`, found in one pass in document order (an anchor counts from where it stands). */
function aliasProblem(doc: Document, error: Error): { alias: Alias | undefined; message: string } {
  const anchors = new Set<string>();
  let first: Alias | undefined;
  let unresolved: Alias | undefined;
  visit(doc, (_key, node) => {
    if (isAlias(node)) {
      first ??= node;
      if (!anchors.has(node.source)) {
        unresolved = node;
        return visit.BREAK;
      }
    } else if (isNode(node) && node.anchor !== undefined) {
      anchors.add(node.anchor);
    }
    return undefined;
  });
  if (unresolved) return { alias: unresolved, message: `alias *${unresolved.source} has no anchor &${unresolved.source} before it` };
  if (/alias count/i.test(error.message)) {
    return { alias: first, message: `aliases expand to more than ${MAX_ALIAS_USES} copies (YAML *aliases): write the values out, or use fewer` };
  }
  return { alias: first, message: `cannot be read: ${error.message}` };
}

/** `rules[2].when.field` */
export function formatPath(path: PropertyKey[]): string {
  return path.map((key, i) => (typeof key === 'number' ? `[${key}]` : `${i === 0 ? '' : '.'}${String(key)}`)).join('');
}

/** The offset of the deepest node along `path` that exists in the document (a missing key points at its parent). */
function locate(doc: Document, path: (string | number)[]): number | undefined {
  let node = doc.contents as Node | null;
  let offset = node?.range?.[0];
  for (const key of path) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (p.key as { value?: unknown } | null)?.value === key);
      if (!pair) break;
      // Point at the key, not its value: that is where a reader looks for `field:` or `score:`.
      offset = (pair.key as Node).range?.[0] ?? offset;
      node = pair.value as Node | null;
    } else if (isSeq(node) && typeof key === 'number') {
      node = node.items[key] as Node | null;
      if (!node) break;
      offset = node.range?.[0] ?? offset;
    } else {
      break;
    }
  }
  return offset;
}

/** How a stored rule set names itself in errors and status: where it came from. */
export const ruleSetLabel = (account: string, eventType: string, version?: number) =>
  `${account}/${eventType}.yaml${version === undefined ? '' : ` (v${version})`}`;
