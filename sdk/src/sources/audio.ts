import type { Source } from '../source.js';

type OfflineContext = typeof OfflineAudioContext;

/**
 * A sum of samples of a compressed triangle wave, rendered offline (nothing is played): the float
 * arithmetic of the audio stack differs between browsers, versions and processors.
 */
function render(Context: OfflineContext): Promise<number> {
  const context = new Context(1, 5000, 44100);
  const oscillator = context.createOscillator();
  oscillator.type = 'triangle';
  oscillator.frequency.value = 10000;
  const compressor = context.createDynamicsCompressor();
  compressor.threshold.value = -50;
  compressor.knee.value = 40;
  compressor.ratio.value = 12;
  compressor.attack.value = 0;
  compressor.release.value = 0.25;
  oscillator.connect(compressor);
  compressor.connect(context.destination);
  oscillator.start(0);
  return new Promise<AudioBuffer>((resolve, reject) => {
    // Older Safari answers through the event only; a suspended context never answers (the budget ends it).
    context.oncomplete = (event) => resolve(event.renderedBuffer);
    context.startRendering()?.then(resolve, reject);
  }).then((buffer) => {
    const samples = buffer.getChannelData(0);
    let sum = 0;
    for (let i = 4500; i < samples.length; i++) sum += Math.abs(samples[i]!);
    return sum;
  });
}

/** Rendered twice, like the canvas: a browser that adds noise to audio reads gets it left out. */
export const audio: Source = {
  name: 'audio',
  scope: 'browser',
  probe: async () => {
    const Context = window.OfflineAudioContext ?? (window as Window & { webkitOfflineAudioContext?: OfflineContext }).webkitOfflineAudioContext;
    if (!Context) return undefined;
    const [first, second] = await Promise.all([render(Context), render(Context)]);
    return first === second ? first : undefined;
  },
};
