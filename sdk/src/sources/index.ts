import type { Source } from '../source.js';
import { audio } from './audio.js';
import { canvasSource } from './canvas.js';
import { fonts } from './fonts.js';
import { deviceMemory, hardwareConcurrency } from './hardware.js';
import { languages } from './languages.js';
import { platform } from './platform.js';
import { screenSource } from './screen.js';
import { timeZone } from './time-zone.js';
import { touch } from './touch.js';
import { userAgentData } from './user-agent-data.js';
import { userAgent } from './user-agent.js';
import { webglRenderer } from './webgl.js';

/** Every signal, in the order they start: the slow asynchronous ones first, so they overlap the rest. */
export const SOURCES: readonly Source[] = [
  audio,
  userAgentData as Source,
  screenSource,
  hardwareConcurrency,
  deviceMemory,
  platform,
  timeZone,
  touch,
  webglRenderer,
  canvasSource,
  fonts,
  languages,
  userAgent,
];
