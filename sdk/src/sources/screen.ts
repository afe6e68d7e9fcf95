import type { Source } from '../source.js';

/**
 * The display: its size, longer side first so that turning a phone does not change it, and colour
 * depth. Not the pixel ratio: it moves with the browser's zoom.
 */
export const screenSource: Source = {
  name: 'screen',
  scope: 'device',
  probe: () => {
    const { width, height, colorDepth } = screen;
    return { size: [Math.max(width, height), Math.min(width, height)], color_depth: colorDepth };
  },
};
