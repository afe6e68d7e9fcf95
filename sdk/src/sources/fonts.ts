import type { Source } from '../source.js';

/** Fonts that tell systems and installed software apart; a font the browser cannot see is just absent. */
const CANDIDATES = [
  'Arial Black', 'Arial Narrow', 'Bahnschrift', 'Calibri', 'Cambria', 'Candara', 'Comic Sans MS', 'Consolas', 'Constantia',
  'Corbel', 'Franklin Gothic Medium', 'Gabriola', 'Leelawadee UI', 'Malgun Gothic', 'Microsoft YaHei', 'MS Gothic', 'Segoe UI',
  'Segoe Print', 'SimSun', 'Sylfaen', 'Yu Gothic', 'American Typewriter', 'Avenir', 'Baskerville', 'Futura', 'Geneva',
  'Gill Sans', 'Helvetica Neue', 'Hiragino Sans', 'Menlo', 'Monaco', 'Optima', 'PingFang SC', 'Skia', 'Cantarell',
  'DejaVu Sans', 'Droid Sans', 'Liberation Sans', 'Noto Color Emoji', 'Noto Sans', 'Roboto', 'Ubuntu', 'Garamond',
  'Century Gothic', 'Lucida Bright', 'Palatino Linotype', 'Source Sans Pro', 'Wingdings',
];
const BASES = ['monospace', 'sans-serif', 'serif'];
const SAMPLE = 'mmmmmmmmmmlli WwQq@#0123';

/**
 * The candidate fonts the browser renders, found by measuring a sample in each against the generic
 * families: a font that is present changes the width in at least one of them. Canvas text metrics
 * need no layout of the page and work before its body exists.
 */
export const fonts: Source = {
  name: 'fonts',
  scope: 'browser',
  probe: () => {
    const context = document.createElement('canvas').getContext('2d');
    if (!context) return undefined;
    const width = (family: string) => {
      context.font = `72px ${family}`;
      return context.measureText(SAMPLE).width;
    };
    const base = BASES.map(width);
    return CANDIDATES.filter((font) => BASES.some((family, i) => width(`"${font}", ${family}`) !== base[i]));
  },
};
