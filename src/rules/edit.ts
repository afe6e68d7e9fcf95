import { isDeepStrictEqual } from 'node:util';
import { isMap, isScalar, isSeq, parseDocument, type Document, type Node, type Pair } from 'yaml';
import { spliceRuleFile } from './edit-text.js';

/**
 * Rule files edited as data (the admin API's structured edits) and written back as YAML, the
 * exchange format, keeping what people wrote around what did not change: the text is spliced where
 * the data changed (edit-text.ts), so every untouched line stays byte for byte (comments, their
 * alignment, flow maps) and a diff between two versions shows the change, not a reformatted file. Rules are matched
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
  if (yaml) {
    const spliced = spliceRuleFile(yaml, next, sameRule);
    // The splice is checked: what it wrote must read back as `next`, else the document is written anew.
    if (spliced !== undefined && isDeepStrictEqual(ruleFileData(spliced), next)) return spliced;
  }
  return reprinted(yaml, next);
}

/** A list item matched by rule identity; an item without one (a list of values) by position. */
function sameRule(old: Node, oldIndex: number, value: unknown, index: number): boolean {
  const key = ruleKey(value);
  const oldKey = ruleKey(old.toJSON());
  return key !== undefined ? oldKey === key : oldKey === undefined && oldIndex === index;
}

/** `next` merged into the parsed document and printed whole: comments kept, layout normalised. */
function reprinted(yaml: string | null, next: RuleFileData): string {
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
