/**
 * A source URL as the job prints and records it, and the service shows it: scheme, host and path
 * only. Userinfo (`https://user:pass@host/…`) and the query string (`?token=…`) are where operators
 * put credentials for a private mirror; the query becomes `?…`, the fragment is dropped. A string
 * `new URL()` cannot parse (the settings accept any `http(s)://` text) is cut the same way by hand:
 * everything up to the last `@` before the query, and the query, go.
 */
export function shownUrl(url: string): string {
  let parsed: URL | null;
  try {
    parsed = new URL(url);
  } catch {
    parsed = null;
  }
  if (parsed !== null) return `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search === '' ? '' : '?…'}`;
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? '';
  const rest = url.slice(scheme.length);
  const query = rest.search(/[?#]/);
  const beforeQuery = query === -1 ? rest : rest.slice(0, query);
  const hasQuery = query !== -1 && rest[query] === '?';
  return `${scheme}${beforeQuery.slice(beforeQuery.lastIndexOf('@') + 1)}${hasQuery ? '?…' : ''}`;
}

/** Every URL in a message (an error naming the URL it fetched), as `shownUrl` shows it. */
export function redactUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*[^\s"'<>:,.;)]/gi, shownUrl);
}
