import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiProblem } from './api/client';

export interface Resource<T> {
  data: T | undefined;
  error: ApiProblem | undefined;
  loading: boolean;
  reload(): void;
}

/** Loads `load()` when `deps` change; `reload()` loads again (after a change the page made). */
export function useResource<T>(load: () => Promise<T>, deps: unknown[]): Resource<T> {
  const [state, setState] = useState<{ data?: T; error?: ApiProblem; loading: boolean }>({ loading: true });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => current && setState({ data, loading: false }),
      (error: unknown) => current && setState({ error: asProblem(error), loading: false }),
    );
    return () => {
      current = false;
    };
  }, [...deps, generation]); // the caller names what the load depends on
  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

export const asProblem = (error: unknown): ApiProblem =>
  error instanceof ApiProblem ? error : new ApiProblem(0, 'error', 'Something went wrong', error instanceof Error ? error.message : String(error));

/** Runs an action (a button's), keeping its error and whether it is under way. */
export function useAction<A extends unknown[], T>(action: (...args: A) => Promise<T>) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<ApiProblem | undefined>();
  const run = async (...args: A): Promise<T | undefined> => {
    setBusy(true);
    setError(undefined);
    try {
      return await action(...args);
    } catch (e) {
      setError(asProblem(e));
      return undefined;
    } finally {
      setBusy(false);
    }
  };
  return { run, busy, error, clear: () => setError(undefined) };
}

/**
 * A list read a page at a time, newest first: the first page whenever `key` (what the list is of:
 * account, filters) changes, the next one on `more()`. An answer to a read made for another key
 * (the filters changed meanwhile) is dropped, so the page never shows one view's rows under
 * another's filters.
 */
export function usePages<T, C>(key: string, read: (cursor: C | undefined) => Promise<{ items: T[]; next: C | null }>) {
  const [items, setItems] = useState<T[]>([]);
  const [next, setNext] = useState<C | null>(null);
  const shown = useRef(key);
  shown.current = key;
  const load = useAction(async (cursor?: C) => {
    const asked = key;
    const page = await read(cursor);
    if (asked !== shown.current) return;
    setItems((before) => (cursor === undefined ? page.items : [...before, ...page.items]));
    setNext(page.next);
  });
  useEffect(() => {
    setItems([]);
    setNext(null);
    void load.run();
  }, [key]);
  return {
    items, error: load.error, busy: load.busy,
    /** The next page, when there is one and none is being read. */
    more: next !== null && !load.busy ? () => void load.run(next) : undefined,
    /** The first page again (after a change the page made). */
    reload: () => load.run(),
    /** Items newer than the first shown, put before it (what a poll found), for this key only. */
    prepend: (asked: string, newer: T[]) => {
      if (asked === shown.current && newer.length > 0) setItems((before) => [...newer, ...before]);
    },
  };
}
