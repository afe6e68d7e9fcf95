import uPlot from 'uplot';
import { fromZero, UPlot } from '../../../components/UPlot';

export const STATES = ['approve', 'review', 'decline'] as const;
export type State = (typeof STATES)[number];

const HEIGHT = 240;
const LIVE = { stroke: '#4b5563', fill: '#9ca3af' };
const CANDIDATE = { stroke: '#1d4ed8', fill: '#60a5fa' };

/**
 * Decisions per state, live beside the candidate (a backtest's or the shadow's), as grouped bars
 * drawn by uPlot on a canvas. The table under it carries the same numbers for screen readers: the
 * canvas is labelled with them too.
 */
export function StateChart({ live, candidate, candidateName }: { live: Record<State, number>; candidate: Record<State, number>; candidateName: string }) {
  const bar = (align: -1 | 1) => uPlot.paths.bars!({ size: [0.35, 80], align, gap: 2 });
  const summary = (counts: Record<State, number>) => STATES.map((s) => `${counts[s]} ${s}`).join(', ');
  return (
    <figure class="state-chart">
      <UPlot label={`Decisions per state. Live: ${summary(live)}. ${candidateName}: ${summary(candidate)}.`} deps={[live, candidate, candidateName]} make={(width) => [{
        width: Math.max(320, Math.min(640, width)),
        height: HEIGHT,
        legend: { show: true, live: false },
        cursor: { show: false },
        scales: { x: { time: false, range: [-0.6, STATES.length - 0.4] }, y: { range: fromZero } },
        axes: [
          { splits: () => STATES.map((_, i) => i), values: (_u, splits) => splits.map((i) => STATES[i] ?? '') },
          { values: (_u, splits) => splits.map((v) => (Number.isInteger(v) ? String(v) : '')) },
        ],
        series: [
          {},
          { label: 'live', ...LIVE, paths: bar(-1), points: { show: false } },
          { label: candidateName, ...CANDIDATE, paths: bar(1), points: { show: false } },
        ],
      }, [STATES.map((_, i) => i), STATES.map((s) => live[s]), STATES.map((s) => candidate[s])]]} />
      <figcaption class="muted">Decisions per state, live and {candidateName}.</figcaption>
    </figure>
  );
}
