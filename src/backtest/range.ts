/**
 * A backtest's time range as people write it: a time ago (`30m`, `12h`, `7d`) or an ISO-8601
 * date or date-time (`2026-11-01`, `2026-11-01T12:00:00Z`). The evaluation log keeps
 * RETENTION_DAYS (30 by default): a range further back finds nothing to replay.
 */
const AGO = /^(\d{1,6})(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const ISO = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/;

/** Milliseconds since the epoch, or null when `text` is neither form. */
export function parseTimeOrAgo(text: string, now: number): number | null {
  const ago = AGO.exec(text);
  if (ago) return now - Number(ago[1]) * UNIT_MS[ago[2] as keyof typeof UNIT_MS];
  if (!ISO.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : ms;
}
