import { sha256Hex } from '../sha256.js';
import type { Source } from '../source.js';

const TEXT = 'Cwm fjordbank glyphs vext quiz, \u{1F603}\u2603';

/** Text, emoji, blending and curves: how they rasterise varies with the graphics stack and fonts. */
function draw(): string | undefined {
  const canvas = document.createElement('canvas');
  canvas.width = 240;
  canvas.height = 60;
  const context = canvas.getContext('2d');
  if (!context) return undefined;
  context.textBaseline = 'alphabetic';
  context.fillStyle = '#f60';
  context.fillRect(125, 1, 62, 20);
  context.fillStyle = '#069';
  context.font = '11pt "Times New Roman"';
  context.fillText(TEXT, 2, 15);
  context.fillStyle = 'rgba(102, 204, 0, 0.2)';
  context.font = '18pt Arial';
  context.fillText(TEXT, 4, 45);
  context.globalCompositeOperation = 'multiply';
  for (const [color, x] of [['#f2f', 40], ['#2ff', 80], ['#ff2', 60]] as const) {
    context.fillStyle = color;
    context.beginPath();
    context.arc(x, 40, 20, 0, Math.PI * 2, true);
    context.closePath();
    context.fill();
  }
  return canvas.toDataURL();
}

/**
 * A drawing's pixels, as a digest. Drawn twice: a browser that adds random noise to canvas reads
 * (Safari, Firefox and Brave in their privacy modes) gives two different images, and a value that
 * changes on every call would make the hash useless, so it is left out.
 */
export const canvasSource: Source = {
  name: 'canvas',
  scope: 'browser',
  probe: () => {
    const first = draw();
    return first !== undefined && first === draw() ? sha256Hex(first) : undefined;
  },
};
