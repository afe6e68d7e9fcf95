import { describe, expect, it } from 'vitest';
import { evaluationId } from '../../src/evaluation/id.js';

describe('evaluation ids (UUIDv7)', () => {
  it('are RFC 9562 version 7, variant 10', () => {
    expect(evaluationId()).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('carry the millisecond they were made in', () => {
    // Ids never go back in time within a process, so this one is made in the future.
    const at = Date.now() + 10_000_000;
    expect(parseInt(evaluationId(at).replace(/-/g, '').slice(0, 12), 16)).toBe(at);
  });

  it('sort in the order they were made, within one millisecond too, and never repeat', () => {
    const now = Date.now() + 20_000_000;
    const ids = Array.from({ length: 3000 }, (_, i) => evaluationId(now + Math.floor(i / 1000)));
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
  });
});
