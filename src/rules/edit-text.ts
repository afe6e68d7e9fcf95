import { Document, isMap, isScalar, isSeq, parseDocument, Scalar, type Node, type Pair, type YAMLMap, type YAMLSeq } from 'yaml';

/**
 * A rule file edited as data, written by splicing its text: only the lines holding what changed
 * are written anew, every other byte stays as the author wrote it (comment alignment, flow maps,
 * quoting, blank lines). A scalar that changed is replaced where it stands (its trailing comment
 * kept); a key or rule that went is cut out with the comment lines above it; one that came is
 * written at its siblings' indentation; rules are matched by identity, so a reorder moves each
 * rule's lines whole. What cannot be spliced (a file that does not parse, a top level that is not
 * a block map) gives undefined and the caller writes the document anew.
 */

/** Whether the list item `old` (at `oldIndex`) is the one `value` (at `index`) stands for. */
type Matcher = (old: Node, oldIndex: number, value: unknown, index: number) => boolean;

export function spliceRuleFile(source: string, next: Record<string, unknown>, sameItem: Matcher): string | undefined {
  const doc = parseDocument(source, { keepSourceTokens: false });
  if (doc.errors.length > 0 || !isMap(doc.contents) || doc.contents.flow) return undefined;
  return new Splicer(source, sameItem).rewrite(doc.contents, next, 0, source.length);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const keyName = (pair: Pair) => (isScalar(pair.key) ? String(pair.key.value) : String(pair.key));
const range = (node: unknown) => (node as { range?: [number, number, number] | null }).range ?? undefined;

interface Span { start: number; end: number }

class Splicer {
  constructor(private readonly src: string, private readonly sameItem: Matcher) {}

  /** The text of src[from, to), which holds `node`, rewritten to hold `value`; undefined: write it anew. */
  rewrite(node: unknown, value: unknown, from: number, to: number): string | undefined {
    const at = range(node);
    if (at === undefined) return undefined;
    if (isScalar(node) && (value === null || typeof value !== 'object')) {
      if (node.value === value) return this.src.slice(from, to);
      return this.src.slice(from, at[0]) + scalarText(value, node) + this.src.slice(at[1], to);
    }
    if (isMap(node) && isPlainObject(value)) return node.flow ? this.flow(node, value, from, to) : this.blockMap(node, value, from, to);
    if (isSeq(node) && Array.isArray(value)) return node.flow ? this.flow(node, value, from, to) : this.blockSeq(node, value, from, to);
    return undefined;
  }

  /** A flow collection keeps its text when only scalars in it changed, at the same places; else it is written anew. */
  private flow(node: YAMLMap | YAMLSeq, value: Record<string, unknown> | unknown[], from: number, to: number): string | undefined {
    const keys = isMap(node) ? node.items.map(keyName) : node.items.map((_, i) => String(i));
    const wanted = Array.isArray(value) ? value.map((_, i) => String(i)) : Object.keys(value);
    if (keys.length !== wanted.length || keys.some((k) => !wanted.includes(k))) return undefined;
    // Right to left, so each splice leaves the positions of the ones before it valid.
    let text = this.src.slice(from, to);
    for (let i = node.items.length - 1; i >= 0; i--) {
      const item = node.items[i]!;
      const child = isMap(node) ? (item as Pair).value : item;
      const at = range(child);
      if (at === undefined) return undefined;
      const v = (value as Record<string, unknown>)[keys[i]!];
      const piece = this.rewrite(child, v, at[0], at[1]);
      if (piece === undefined) return undefined;
      text = text.slice(0, at[0] - from) + piece + text.slice(at[1] - from);
    }
    return text;
  }

  private blockMap(node: YAMLMap, value: Record<string, unknown>, from: number, to: number): string | undefined {
    const spans: Array<Span & { pair: Pair; key: number }> = [];
    let floor = from;
    for (const pair of node.items) {
      const key = range(pair.key);
      const end = range(pair.value) ?? key;
      if (key === undefined || end === undefined) return undefined;
      const lineStart = this.lineStart(key[0]);
      const onItsLine = /^[ \t]*$/.test(this.src.slice(lineStart, key[0]));
      const start = onItsLine ? this.withComments(lineStart, floor) : key[0];
      spans.push({ pair, key: key[0], start, end: this.lineEnd(end[2]) });
      floor = spans.at(-1)!.end;
    }
    const first = spans[0];
    if (first === undefined) return undefined;
    const indent = first.key - this.lineStart(first.key);
    let out = this.src.slice(from, first.start);
    for (const [i, span] of spans.entries()) {
      const name = keyName(span.pair);
      const gap = this.src.slice(span.end, spans[i + 1]?.start ?? span.end);
      if (!Object.hasOwn(value, name)) {
        // The first key of a list item shares the dash's line: the item is written anew instead.
        if (span.start === span.key && i === 0) return undefined;
        continue;
      }
      const kept = this.rewrite(span.pair.value, value[name], span.start, span.end);
      const lead = this.src.slice(span.start, span.key);
      out += (kept ?? lead + indented(render({ [name]: value[name] }, flowOf(span.pair.value)), indent)) + gap;
    }
    const present = new Set(node.items.map(keyName));
    for (const [name, v] of Object.entries(value)) {
      if (!present.has(name)) out += ' '.repeat(indent) + indented(render({ [name]: v }, false), indent);
    }
    return out + this.src.slice(spans.at(-1)!.end, to);
  }

  private blockSeq(node: YAMLSeq, value: unknown[], from: number, to: number): string | undefined {
    const spans: Array<Span & { item: Node; dash: number }> = [];
    let floor = from;
    for (const item of node.items as Node[]) {
      const at = range(item);
      if (at === undefined) return undefined;
      const lineStart = this.lineStart(at[0]);
      const dash = this.src.indexOf('-', lineStart);
      if (dash < 0 || dash >= at[0] || !/^[ \t]*$/.test(this.src.slice(lineStart, dash))) return undefined;
      spans.push({ item, dash, start: this.withComments(lineStart, floor), end: this.lineEnd(at[2]) });
      floor = spans.at(-1)!.end;
    }
    const first = spans[0];
    if (first === undefined) return undefined;
    const indent = first.dash - this.lineStart(first.dash);
    const used = new Set<number>();
    let out = this.src.slice(from, first.start);
    for (const [i, v] of value.entries()) {
      const j = spans.findIndex((s, k) => !used.has(k) && this.sameItem(s.item, k, v, i));
      if (j < 0) {
        out += ' '.repeat(indent) + indented(render([v], false), indent);
        continue;
      }
      used.add(j);
      const span = spans[j]!;
      const gap = this.src.slice(span.end, spans[j + 1]?.start ?? span.end);
      const kept = this.rewrite(span.item, v, span.start, span.end);
      out += (kept ?? this.src.slice(span.start, span.dash) + indented(render([v], false), indent)) + gap;
    }
    return out + this.src.slice(spans.at(-1)!.end, to);
  }

  private lineStart(pos: number): number {
    return this.src.lastIndexOf('\n', pos - 1) + 1;
  }

  /** Just past the end of the line `pos` is on (a node's end already past its newline stays). */
  private lineEnd(pos: number): number {
    if (pos > 0 && this.src[pos - 1] === '\n') return pos;
    const newline = this.src.indexOf('\n', pos);
    return newline < 0 ? this.src.length : newline + 1;
  }

  /** A line's start moved up over the comment lines right above it (they are about it), not past `floor`. */
  private withComments(start: number, floor: number): number {
    while (start > floor) {
      const above = this.lineStart(start - 1);
      if (above < floor || !this.src.slice(above, start).trim().startsWith('#')) break;
      start = above;
    }
    return start;
  }
}

const flowOf = (node: unknown) => (isMap(node) || isSeq(node)) && node.flow === true && node.items.length > 0;

/** `value` as YAML lines (ending in a newline), a collection at the top in flow style when `flow`. */
function render(value: Record<string, unknown> | unknown[], flow: boolean): string {
  const doc = new Document(value);
  if (flow) {
    const top = doc.contents as YAMLMap | YAMLSeq;
    const inner = (top.items[0] as Pair | Node);
    const child = isMap(top) ? (inner as Pair).value : inner;
    if (isMap(child) || isSeq(child)) child.flow = true;
  }
  return doc.toString({ lineWidth: 0 });
}

/** Every line but the first indented by `indent` spaces (the first goes where the old text's did). */
const indented = (text: string, indent: number) => text.replace(/\n(?=.)/g, `\n${' '.repeat(indent)}`);

/** A scalar written as the old one was (its quotes kept for a string), safe inside a flow collection too. */
function scalarText(value: unknown, old: Scalar): string {
  const scalar = new Scalar(value);
  if (typeof value === 'string' && typeof old.value === 'string') scalar.type = old.type;
  const doc = new Document([scalar]);
  (doc.contents as YAMLSeq).flow = true;
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false }).trim().slice(1, -1);
}
