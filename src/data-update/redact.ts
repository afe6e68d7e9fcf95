/**
 * A source URL as the job prints and records it, and the service shows it: scheme, host and path
 * only. Userinfo (`https://user:pass@host/…`) and the query string (`?token=…`) are where operators
 * put credentials for a private mirror; the query becomes `?…`, the fragment is dropped, the rest
 * stays as written. A string `new URL()` cannot parse (the settings accept any `http(s)://` text) is
 * cut at the last `@` before its query instead of the last one before its path, so no part of a
 * password with a `/` in it is shown either.
 */
export function shownUrl(url: string): string {
  const scheme = /^[a-z][a-z0-9+.-]*:\/\//i.exec(url)?.[0] ?? '';
  const rest = url.slice(scheme.length);
  const queryAt = rest.search(/[?#]/);
  const beforeQuery = queryAt === -1 ? rest : rest.slice(0, queryAt);
  const query = queryAt !== -1 && rest[queryAt] === '?' ? '?…' : '';
  // As URL parsers read it, the authority ends at the first `/` (or `\`) and the userinfo at its last `@`.
  const authorityEnd = URL.canParse(url) ? beforeQuery.search(/[/\\]/) : -1;
  const authority = authorityEnd === -1 ? beforeQuery : beforeQuery.slice(0, authorityEnd);
  const path = authorityEnd === -1 ? '' : beforeQuery.slice(authorityEnd);
  return `${scheme}${authority.slice(authority.lastIndexOf('@') + 1)}${path}${query}`;
}

/** Every URL in a message (an error naming the URL it fetched), as `shownUrl` shows it. */
export function redactUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]*[^\s"'<>:,.;)]/gi, shownUrl);
}
