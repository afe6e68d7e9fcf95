import { Page } from '../../components/ui';
import { BacktestView } from './Backtest';

/**
 * Threat rules: one card per event type. Routes under it: `rules/<event_type>` (one rule set) and
 * `rules/<event_type>/backtest[/<backtest_id>]` (backtests of its drafts).
 */
export function ThreatRules({ rest }: { rest: string[] }) {
  const [eventType, view, id] = rest;
  if (eventType && view === 'backtest') return <BacktestView eventType={eventType} backtestId={id} />;
  return <Page title="Threat rules">{null}</Page>;
}
