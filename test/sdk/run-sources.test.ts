import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runSources } from '../../sdk/src/run-sources.js';
import type { Source } from '../../sdk/src/source.js';

const source = (name: string, probe: Source['probe']): Source => ({ name, scope: 'browser', probe });
const never = () => new Promise<never>(() => {});

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** Settles `promise` under fake timers, reporting whether it had settled when the clock reached `ms`. */
async function settledAt<T>(promise: Promise<T>, ms: number): Promise<boolean> {
  let settled = false;
  void promise.then(() => (settled = true));
  await vi.advanceTimersByTimeAsync(ms);
  return settled;
}

describe('the loop that runs the signals', () => {
  it('keeps values, leaves out a throw, a rejection and undefined, and resolves as soon as all settled', async () => {
    const result = runSources(
      [
        source('sync', () => 1),
        source('async', async () => 'two'),
        source('throws', () => {
          throw new Error('blocked');
        }),
        source('rejects', () => Promise.reject(new Error('denied'))),
        source('absent', () => undefined),
      ],
      500,
    );
    expect(await settledAt(result, 0)).toBe(true);
    await expect(result).resolves.toEqual({ sync: 1, async: 'two' });
  });

  it('resolves at the budget when a signal never settles, without it', async () => {
    const result = runSources([source('hangs', never), source('quick', () => true)], 500);
    expect(await settledAt(result, 499)).toBe(false);
    expect(await settledAt(result, 1)).toBe(true);
    await expect(result).resolves.toEqual({ quick: true });
  });

  it('is not changed by a signal that settles after the budget', async () => {
    let late: (value: string) => void = () => {};
    const result = runSources([source('late', () => new Promise<string>((resolve) => (late = resolve)))], 100);
    await vi.advanceTimersByTimeAsync(100);
    const value = await result;
    late('too late');
    await vi.advanceTimersByTimeAsync(0);
    expect(value).toEqual({});
  });

  it('resolves at once with no sources', async () => {
    expect(await settledAt(runSources([], 500), 0)).toBe(true);
  });
});
