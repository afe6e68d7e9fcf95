import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair } from 'yaml';

/**
 * Rule files edited as data (the admin API's structured edits) and written back as YAML, the
 * exchange format, keeping what people wrote around what did not change: each value is merged into
 * the existing document, so the comments beside an untouched rule, key or score stay where they
 * were, and a diff between two versions shows the change, not a reformatted file. Rules are matched
 * by identity (`library` or `id`), not position, so removing one keeps the comments of the others.
 */

/** The file as plain data, exactly what its YAML holds (no defaults filled in). */
export type RuleFileData = Record<string, unknown>;

export function ruleFileData(yaml: string): RuleFileData {
  const value = parseDocument(yaml).toJS({ maxAliasCount: 100 }) as unknown;
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as RuleFileData) : {};
}

/** The identity of a rule in a file: its library id or its custom id. */
export function ruleKey(rule: unknown): string | undefined {
  if (typeof rule !== 'object' || rule === null) return undefined;
  const { library, id } = rule as { library?: unknown; id?: unknown };
  if (typeof library === 'string') return library;
  return typeof id === 'string' ? id : undefined;
}

/** `next` written as YAML over `yaml` (null: a new file), keeping the comments of what did not change. */
export function writeRuleFile(yaml: string | null, next: RuleFileData): string {
  const doc = parseDocument(yaml ?? '');
  doc.contents = merge(doc, doc.contents, next) as typeof doc.contents;
  return doc.toString({ lineWidth: 0 });
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const keyName = (pair: Pair) => (isScalar(pair.key) ? String(pair.key.value) : String(pair.key));

function merge(doc: Document, node: unknown, value: unknown): Node {
  if (isScalar(node) && (value === null || typeof value !== 'object')) {
    if (typeof node.value === typeof value) {
      node.value = value;
      return node;
    }
    // Another type: a new node (a quoted string does not become a quoted number), with the comments.
    const fresh = doc.createNode(value);
    fresh.commentBefore = node.commentBefore;
    fresh.comment = node.comment;
    return fresh;
  }
  if (isMap(node) && isPlainObject(value)) {
    node.items = node.items.filter((pair) => Object.hasOwn(value, keyName(pair)));
    for (const [key, v] of Object.entries(value)) {
      const pair = node.items.find((p) => keyName(p) === key);
      if (pair) pair.value = merge(doc, pair.value, v);
      else node.items.push(doc.createPair(key, v));
    }
    return node;
  }
  if (isSeq(node) && Array.isArray(value)) {
    const old = [...node.items] as Node[];
    // The parser gives a comment above the first item to the list: it belongs to that item, and goes where it goes.
    if (node.commentBefore && old[0] !== undefined && !old[0].commentBefore) {
      old[0].commentBefore = node.commentBefore;
      node.commentBefore = undefined;
    }
    const used = new Set<Node>();
    node.items = value.map((v, i) => {
      const key = ruleKey(v);
      const match = key !== undefined
        ? old.find((o) => !used.has(o) && ruleKey(o.toJSON()) === key)
        : old[i] !== undefined && !used.has(old[i]) && ruleKey(old[i].toJSON()) === undefined ? old[i] : undefined;
      if (match === undefined) return doc.createNode(v);
      used.add(match);
      return merge(doc, match, v);
    });
    return node;
  }
  return doc.createNode(value);
}
