import { randomFillSync } from 'node:crypto';

let lastMs = 0;
let sequence = 0;

// One call into the CSPRNG per 256 ids instead of one per id (the same batching crypto.randomUUID does).
const POOL_IDS = 256;
const pool = Buffer.alloc(POOL_IDS * 10);
let poolOffset = pool.length;

/** 10 random bytes: 8 for the tail of the id, 2 for a fresh sequence start. */
function randomTen(): Buffer {
  if (poolOffset === pool.length) {
    randomFillSync(pool);
    poolOffset = 0;
  }
  poolOffset += 10;
  return pool.subarray(poolOffset - 10, poolOffset);
}

/** Written whole by each call before it is read: one buffer for every id, not one per id. */
const bytes = Buffer.alloc(16);

/**
 * A UUIDv7 (RFC 9562 §5.7): 48-bit Unix milliseconds, then randomness, so ids sort by time.
 * Ids made in the same millisecond by this process keep their order through a 12-bit counter.
 */
export function evaluationId(now: number = Date.now()): string {
  const random = randomTen();
  if (now <= lastMs) {
    sequence = (sequence + 1) & 0xfff;
    if (sequence === 0) lastMs += 1;
  } else {
    lastMs = now;
    sequence = random.readUInt16BE(8) & 0x3ff;
  }
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (sequence >> 8);
  bytes[7] = sequence & 0xff;
  random.copy(bytes, 8, 0, 8);
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
