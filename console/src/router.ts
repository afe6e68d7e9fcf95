import { useEffect, useRef, useState } from 'preact/hooks';

/**
 * Routes live in the URL's fragment: `#/<account>/<page>/<rest>`. The server only serves files, a
 * link can be shared and the browser's back button works. `#setup=<token>` is the first owner's
 * one-time link that a development start prints.
 */
export interface Route {
  account: string | undefined;
  page: string;
  rest: string[];
}

export function parseRoute(hash: string): Route {
  const [account, page, ...rest] = hash.replace(/^#\/?/, '').split('/').map(decodeURIComponent);
  return { account: account || undefined, page: page || 'start', rest };
}

export const href = (account: string, page: string, ...rest: string[]) => `#/${[account, page, ...rest].map(encodeURIComponent).join('/')}`;

/** Components holding edits not saved yet: leaving the page (in the console or the browser) asks first. */
const unsaved = new Set<object>();
const LEAVE = 'Leave this page? Your changes that are not saved will be lost.';

/** Marks the calling component's edits as unsaved while `dirty`. */
export function useUnsavedEdits(dirty: boolean) {
  const token = useRef({});
  useEffect(() => {
    if (dirty) unsaved.add(token.current);
    else unsaved.delete(token.current);
    return () => void unsaved.delete(token.current);
  }, [dirty]);
}

/** Whether to go on and lose the unsaved edits (true when there are none). */
export const confirmLeave = () => unsaved.size === 0 || confirm(LEAVE);

// Closing the tab, reloading, or leaving the console: the browser's own warning.
addEventListener('beforeunload', (event) => {
  if (unsaved.size > 0) event.preventDefault();
});

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = (event: HashChangeEvent) => {
      // Already navigated: staying puts the old address back (no new history entry, no second event).
      if (!confirmLeave()) {
        history.replaceState(history.state, '', new URL(event.oldURL).hash);
        return;
      }
      setHash(location.hash);
    };
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parseRoute(hash);
}

/** To another page of the console; `replace`: in place of the current history entry (a redirect, which Back should not land on). */
export const navigate = (to: string, options: { replace?: boolean } = {}) => {
  if (options.replace) location.replace(to);
  else location.hash = to;
};
