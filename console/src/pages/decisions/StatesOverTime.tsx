import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import type { Answered } from '../../api/client';
import { Time } from '../../components/ui';

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
  const box = useRef<HTMLDivElement>(null);
  const totals = Object.fromEntries(SERIES.map(({ state }) => [state, stats.buckets.reduce((sum, b) => sum + b[state], 0)])) as Record<(typeof SERIES)[number]['state'], number>;
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const x = stats.buckets.map((b) => Date.parse(b.start) / 1000);
    const plot = new uPlot({
      width: Math.max(360, element.clientWidth),
      height: 200,
      cursor: { drag: { x: false, y: false } },
      legend: { live: false },
      scales: { y: { range: (_u, _min, max) => [0, Math.max(1, max) * 1.1] } },
      axes: [{}, { values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? v.toLocaleString() : '')) }],
      series: [
        {},
        ...SERIES.map(({ state, stroke }) => ({ label: `${state} (${totals[state].toLocaleString()})`, stroke, width: 2, points: { show: stats.buckets.length <= 60 } })),
      ],
    }, [x, ...SERIES.map(({ state }) => stats.buckets.map((b) => b[state]))], element);
    return () => plot.destroy();
  }, [stats]);
  return (
    <figure class="states-over-time">
      <div ref={box} role="img" aria-label={`Decisions per ${stats.bucket}: ${SERIES.map(({ state }) => `${totals[state]} ${state}`).join(', ')}.`} />
      <figcaption class="muted">Decisions per {stats.bucket}, by state, from <Time at={stats.from} /> to <Time at={stats.to} /> (the last 24 hours unless From is set), for the filters above.</figcaption>
    </figure>
  );
}
