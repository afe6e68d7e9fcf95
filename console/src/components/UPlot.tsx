import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** A y scale from 0 to a tenth above the highest value (at least 1): counts, never negative. */
export const fromZero: uPlot.Range.Function = (_u, _min, max) => [0, Math.max(1, max) * 1.1];

/**
 * A uPlot chart on a canvas (the console's only charting: no hand-drawn SVG), made by `make` from
 * the width its box has, drawn again when `deps` change, destroyed with the component. A canvas
 * says nothing to a screen reader: `label` carries the numbers it shows.
 */
export function UPlot({ label, deps, make }: { label: string; deps: unknown[]; make: (width: number) => [uPlot.Options, uPlot.AlignedData] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const [options, data] = make(element.clientWidth);
    const plot = new uPlot(options, data, element);
    return () => plot.destroy();
  }, deps); // the caller names what the chart depends on
  return <div ref={box} role="img" aria-label={label} />;
}
