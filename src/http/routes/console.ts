import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

/**
 * The web console (`console/`, built by `npm run build` into `console/dist`), served at /console/
 * from the built files: it talks only to /admin/v1 on this origin and loads nothing from elsewhere.
 *
 * - Content-Security-Policy on every answer under /console/: scripts, styles, images and fetches
 *   from this origin only, no inline script or style, no framing, no plugins, no <base>.
 * - Cache: Vite names the files under assets/ by their content, so they are cached for a year;
 *   index.html is revalidated every time, so an upgrade of the service reaches the browser at once.
 * - The console routes by the URL's fragment (`/console/#/acme/keys`): the server only serves files.
 */
export const CONSOLE_DIST = fileURLToPath(new URL('../../../console/dist/', import.meta.url));
export const CONSOLE_PREFIX = '/console/';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const ASSET_CACHE = 'public, max-age=31536000, immutable';
const PAGE_CACHE = 'no-cache';

export async function registerConsole(app: FastifyInstance, root = CONSOLE_DIST): Promise<void> {
  if (!existsSync(`${root}/index.html`)) {
    // A checkout run from source before `npm run build`: the API works, /console/ answers 404.
    app.log.warn('web console not built (npm run build): /console/ is not served');
    return;
  }
  await app.register(async (scope) => {
    scope.addHook('onSend', (_request, reply, payload, done) => {
      reply
        .header('content-security-policy', CONSOLE_CSP)
        .header('referrer-policy', 'no-referrer')
        .header('cross-origin-opener-policy', 'same-origin')
        .header('x-frame-options', 'DENY');
      done(null, payload);
    });
    await scope.register(fastifyStatic, {
      root,
      // Without its trailing slash, so that /console is redirected to /console/.
      prefix: CONSOLE_PREFIX.slice(0, -1),
      redirect: true,
      index: 'index.html',
      cacheControl: false,
      setHeaders: (reply, path) => {
        reply.header('cache-control', path.includes('/assets/') ? ASSET_CACHE : PAGE_CACHE);
      },
    });
  });
}
