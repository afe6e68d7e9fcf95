/**
 * What every step and long-lived resource shares, whatever its domain. Nothing here imports the
 * rest of the project: `core/` is the bottom layer.
 */

/**
 * A step's answer: its facts plus the names of the checks it could not run
 * (e.g. `email.mx` when DNS timed out, `ip.geo` when no database is loaded).
 */
export interface Report<F> {
  facts: F;
  unavailable: string[];
}

/** Where a data source stands, for `/readyz` and the start-up log. */
export interface SourceStatus {
  /** Stable name, e.g. `ip.city`, `email.disposable`. */
  name: string;
  /** File it was read from, or the bundled package it came from. */
  source: string | null;
  /** E.g. `GeoLite2-City`, `list`. */
  type: string;
  loaded: boolean;
  /** ISO-8601 build date of the data, where known. */
  build_date: string | null;
  entries: number | null;
  /** Why the last load or reload was refused, if it was. */
  error: string | null;
  /** Lines or rows skipped as malformed in the loaded copy, for sources that count them. */
  malformed?: number;
  /** Rows cut or dropped because they overlapped an earlier row, for sources that count them. */
  overlapping?: number;
}

/**
 * A long-lived resource on the request path: created once by its factory (initial load done),
 * reloadable, closed on shutdown.
 */
export interface Resource {
  /** Provenance of every data source, for `/readyz` and the start-up log. */
  status(): SourceStatus[];
  close(): Promise<void>;
}

/** An account's identity as the request path sees it (never its keys): the store's unique id. */
export interface Account {
  id: string;
}
