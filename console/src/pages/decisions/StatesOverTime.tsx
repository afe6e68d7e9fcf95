import type { Answered } from '../../api/client';
import { Time } from '../../components/ui';
import { fromZero, UPlot } from '../../components/UPlot';

type Stats = Answered<'decisionStats'>;

const SERIES = [
  { state: 'approve', stroke: '#15803d' },
  { state: 'review', stroke: '#b45309' },
  { state: 'decline', stroke: '#b91c1c' },
] as const;

/**
 * Decisions per state over time, one line per state, drawn by uPlot on a canvas (its legend shows
 * each series' total). The figure's label carries the same totals for screen readers.
 */
export function StatesOverTime({ stats }: { stats: Stats }) {
  const totals = Object.fromEntries(SERIES.map(({ state }) => [state, stats.buckets.reduce((sum, b) => sum + b[state], 0)])) as Record<(typeof SERIES)[number]['state'], number>;
  return (
    <figure class="states-over-time">
      <UPlot label={`Decisions per ${stats.bucket}: ${SERIES.map(({ state }) => `${totals[state]} ${state}`).join(', ')}.`} deps={[stats]} make={(width) => [{
        width: Math.max(360, width),
        height: 200,
        cursor: { drag: { x: false, y: false } },
        legend: { live: false },
        scales: { y: { range: fromZero } },
        axes: [{}, { values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? v.toLocaleString() : '')) }],
        series: [
          {},
          ...SERIES.map(({ state, stroke }) => ({ label: `${state} (${totals[state].toLocaleString()})`, stroke, width: 2, points: { show: stats.buckets.length <= 60 } })),
        ],
      }, [stats.buckets.map((b) => Date.parse(b.start) / 1000), ...SERIES.map(({ state }) => stats.buckets.map((b) => b[state]))]]} />
      <figcaption class="muted">Decisions per {stats.bucket}, by state, from <Time at={stats.from} /> to <Time at={stats.to} /> (the last 24 hours unless From is set), for the filters above.</figcaption>
    </figure>
  );
}
