import { useEffect, useState } from 'preact/hooks';

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

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const changed = () => setHash(location.hash);
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return parseRoute(hash);
}

export const navigate = (to: string) => {
  location.hash = to;
};
