import { setImmediate as nextTurn } from 'node:timers/promises';

/**
 * A check of a MaxMind DB search tree against its metadata
 * (https://maxmind.github.io/MaxMind-DB/#binary-search-tree-section), made once per load: every
 * node reachable from the root is visited once, and each of its two records must be another node,
 * "no data" (`node_count`), or a pointer into the data section. A `node_count` that lies moves
 * where the tree ends and the data begins; the walk, and the separator check before it, catch it.
 */
export interface TreeShape {
  /** Records that point at data: the networks the database holds (an alias counts once). */
  networks: number;
  /** A few addresses spread over the tree whose look-up reaches data, to decode on load. */
  samples: string[];
}

export class TreeError extends Error {}

export interface TreeLayout {
  nodeCount: number;
  recordSize: 24 | 28 | 32;
  ipVersion: 4 | 6;
  /** Bytes of the data section, between the 16-byte separator and the metadata marker. */
  dataSectionSize: number;
}

/** Nodes visited between two turns of the event loop: a few milliseconds of work. */
const SLICE = 1 << 16;
const SAMPLES = 32;
/** A stack entry: node, depth, and the four 32-bit words of the address prefix that leads to it. */
const ENTRY = 6;

/**
 * Walks the whole tree, yielding to the event loop between slices (a City database has millions of
 * nodes). Memory: one bit per node, and a stack of about one entry per bit of the address.
 */
export async function walkTree(tree: Buffer, layout: TreeLayout): Promise<TreeShape> {
  const { nodeCount, recordSize, dataSectionSize } = layout;
  const bits = layout.ipVersion === 6 ? 128 : 32;
  const nodeBytes = recordSize / 4;
  const record = recordReader(tree, recordSize);
  const visited = new Uint32Array(Math.ceil(nodeCount / 32));
  // Depth first: a node is popped, then pushes at most its two children, so the stack holds at
  // most one waiting sibling per level, plus the two children of the deepest node.
  const stack = new Uint32Array((bits + 2) * ENTRY);
  let top = ENTRY; // the root: node 0, depth 0, prefix 0
  visited[0] = 1;
  let networks = 0;
  let visits = 0;
  const samples: string[] = [];
  const sampleEvery = Math.max(1, Math.floor(nodeCount / SAMPLES));
  let nextSample = 0;

  const prefix = new Uint32Array(4); // of the node being visited
  while (top > 0) {
    top -= ENTRY;
    const node = stack[top]!;
    const depth = stack[top + 1]!;
    prefix[0] = stack[top + 2]!;
    prefix[1] = stack[top + 3]!;
    prefix[2] = stack[top + 4]!;
    prefix[3] = stack[top + 5]!;
    if (++visits % SLICE === 0) await nextTurn();
    for (let side = 0; side < 2; side++) {
      const value = record(node * nodeBytes, side);
      if (value === nodeCount) continue;
      if (value < nodeCount) {
        if (depth + 1 >= bits) throw new TreeError(`node ${node} at depth ${depth} points to node ${value}: deeper than a ${bits}-bit address`);
        if ((visited[value >>> 5]! & (1 << (value & 31))) !== 0) continue;
        visited[value >>> 5]! |= 1 << (value & 31);
        stack[top] = value;
        stack[top + 1] = depth + 1;
        stack[top + 2] = prefix[0]!;
        stack[top + 3] = prefix[1]!;
        stack[top + 4] = prefix[2]!;
        stack[top + 5] = prefix[3]!;
        if (side === 1) setBit(stack, top + 2, depth);
        top += ENTRY;
        continue;
      }
      const offset = value - nodeCount - 16;
      if (offset < 0 || offset >= dataSectionSize) {
        throw new TreeError(`node ${node} points to ${value}: outside the data section (node_count ${nodeCount}, ${dataSectionSize} bytes of data)`);
      }
      networks++;
      if (visits >= nextSample && samples.length < SAMPLES) {
        samples.push(addressOf(prefix, depth, side, bits));
        nextSample = visits + sampleEvery;
      }
    }
  }
  return { networks, samples };
}

/** Sets bit `depth` (0 = most significant) of the four words at `at`. */
function setBit(words: Uint32Array, at: number, depth: number): void {
  words[at + (depth >>> 5)]! |= (0x80000000 >>> (depth & 31));
}

/** The first address of the network a record stands for: the node's prefix, then the record's side. */
function addressOf(prefix: Uint32Array, depth: number, side: number, bits: 32 | 128): string {
  const words = prefix.slice();
  if (side === 1) setBit(words, 0, depth);
  if (bits === 32) return `${words[0]! >>> 24}.${(words[0]! >>> 16) & 255}.${(words[0]! >>> 8) & 255}.${words[0]! & 255}`;
  return Array.from(words, (w) => `${(w >>> 16).toString(16)}:${(w & 0xffff).toString(16)}`).join(':');
}

/** Reads the left (side 0) or right (side 1) record of the node at a byte offset. */
function recordReader(tree: Buffer, recordSize: 24 | 28 | 32): (at: number, side: number) => number {
  switch (recordSize) {
    case 24:
      return (at, side) => {
        const i = at + side * 3;
        return (tree[i]! << 16) | (tree[i + 1]! << 8) | tree[i + 2]!;
      };
    case 28:
      // The middle byte holds the high nibbles: the left record's in its upper half.
      return (at, side) => side === 0
        ? (((tree[at + 3]! & 0xf0) << 20) | (tree[at]! << 16) | (tree[at + 1]! << 8) | tree[at + 2]!) >>> 0
        : (((tree[at + 3]! & 0x0f) << 24) | (tree[at + 4]! << 16) | (tree[at + 5]! << 8) | tree[at + 6]!) >>> 0;
    case 32:
      return (at, side) => tree.readUInt32BE(at + side * 4);
  }
}
