import { Page } from '../../components/ui';

/** Backtests of an event type's drafts: start one, follow it, read its report. */
export function BacktestView({ eventType, backtestId }: { eventType: string; backtestId?: string | undefined }) {
  return <Page title={`Backtests: ${eventType}`}>{backtestId ?? null}</Page>;
}
