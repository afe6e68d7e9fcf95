import type { Source } from '../source.js';

/** The browser's generic answer when it hides the real GPU behind WEBGL_debug_renderer_info. */
const MASKED = /^WebKit( WebGL)?$/;

/**
 * The graphics processor, where the browser tells it: Chromium through WEBGL_debug_renderer_info,
 * Firefox and Safari directly (sanitised). Left out when WebGL is disabled or blocked.
 */
export const webglRenderer: Source = {
  name: 'webgl_renderer',
  scope: 'device',
  probe: () => {
    const canvas = document.createElement('canvas');
    const gl = (canvas.getContext('webgl') ?? canvas.getContext('experimental-webgl')) as WebGLRenderingContext | null;
    if (!gl) return undefined;
    try {
      let vendor: unknown = gl.getParameter(gl.VENDOR);
      let renderer: unknown = gl.getParameter(gl.RENDERER);
      // Asked only when needed: Firefox warns in the console that the extension is deprecated.
      if (MASKED.test(String(renderer))) {
        const debug = gl.getExtension('WEBGL_debug_renderer_info');
        if (debug) {
          vendor = gl.getParameter(debug.UNMASKED_VENDOR_WEBGL);
          renderer = gl.getParameter(debug.UNMASKED_RENDERER_WEBGL);
        }
      }
      return typeof renderer === 'string' && renderer !== '' ? { vendor: String(vendor), renderer } : undefined;
    } finally {
      // Browsers keep a few live WebGL contexts per page; give this one back at once.
      gl.getExtension('WEBGL_lose_context')?.loseContext();
    }
  },
};
