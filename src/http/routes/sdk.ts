import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problems } from '../problem.js';

/**
 * The device intelligence SDK (`sdk/`, built into `sdk/dist` by `npm run build`), served to the
 * callers' pages: the classic script at `/sdk/v1/device.js` (it defines `window.RiskDevice`) and the
 * ES module at `/sdk/v1/device.mjs`, and the same bytes under the exact version, `/sdk/v1.0.0/…`.
 *
 * - Cache: the major-version path may change with an upgrade of the service, so it is cached for a
 *   day (and revalidated by ETag); the exact-version path never changes and is cached for a year.
 *   Pin a Subresource Integrity hash only with the exact-version path.
 * - CORS for scripts: `<script crossorigin integrity>` and module scripts from another origin need
 *   `Access-Control-Allow-Origin`; `Cross-Origin-Resource-Policy` lets pages with COEP load them.
 * - The files are read once, at start, and gzipped once; no path from the request reaches the disk.
 */

const SDK_DIR = new URL('../../../sdk/', import.meta.url);

const MAJOR_CACHE = 'public, max-age=86400';
const EXACT_CACHE = 'public, max-age=31536000, immutable';

interface Asset {
  body: Buffer;
  gzip: Buffer;
  etag: string;
  type: string;
}

const FILES = { 'device.js': 'text/javascript; charset=utf-8', 'device.mjs': 'text/javascript; charset=utf-8' } as const;

function loadAsset(file: keyof typeof FILES): Asset {
  const body = readFileSync(new URL(`dist/${file}`, SDK_DIR));
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return { body, gzip: gzipSync(body, { level: 9 }), etag, type: FILES[file] };
}

/** True when the client accepts gzip: `gzip` or `*` with a quality above 0 (RFC 9110 §12.5.3). */
function acceptsGzip(header: string | undefined): boolean {
  if (header === undefined) return false;
  return header.split(',').some((entry) => {
    const [coding = '', ...parameters] = entry.split(';').map((part) => part.trim().toLowerCase());
    const quality = parameters.find((p) => p.startsWith('q='));
    return (coding === 'gzip' || coding === '*') && (quality === undefined || Number(quality.slice(2)) > 0);
  });
}

function send(asset: Asset, cacheControl: string, request: FastifyRequest, reply: FastifyReply) {
  reply
    .header('content-type', asset.type)
    .header('cache-control', cacheControl)
    .header('etag', asset.etag)
    .header('vary', 'Accept-Encoding')
    .header('access-control-allow-origin', '*')
    .header('cross-origin-resource-policy', 'cross-origin')
    .header('x-content-type-options', 'nosniff');
  const match = request.headers['if-none-match'];
  if (match !== undefined && match.split(',').some((tag) => tag.trim().replace(/^W\//, '') === asset.etag)) return reply.code(304).send();
  if (acceptsGzip(request.headers['accept-encoding'])) return reply.header('content-encoding', 'gzip').send(asset.gzip);
  return reply.send(asset.body);
}

export const sdkVersion = (): string => JSON.parse(readFileSync(new URL('package.json', SDK_DIR), 'utf8')).version;

/** Every path the SDK is served at, with its file and cache policy. */
export function sdkRoutes(version: string) {
  const major = version.split('.')[0];
  return (Object.keys(FILES) as (keyof typeof FILES)[]).flatMap((file) => [
    { path: `/sdk/v${major}/${file}`, file, cacheControl: MAJOR_CACHE },
    { path: `/sdk/v${version}/${file}`, file, cacheControl: EXACT_CACHE },
  ]);
}

export function registerSdkRoutes(app: FastifyInstance): void {
  let routes: ReturnType<typeof sdkRoutes>;
  let assets: Record<keyof typeof FILES, Asset>;
  try {
    routes = sdkRoutes(sdkVersion());
    assets = { 'device.js': loadAsset('device.js'), 'device.mjs': loadAsset('device.mjs') };
  } catch (error) {
    // A checkout run from source before `npm run build`: the API works, the SDK paths answer 404.
    app.log.warn({ err: error }, 'device SDK not built (npm run build): /sdk/ paths are not served');
    return;
  }
  for (const { path, file, cacheControl } of routes) {
    app.get(path, (request, reply) => send(assets[file], cacheControl, request, reply));
    app.route({
      method: ['POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
      url: path,
      handler: async (request) => {
        throw problems.methodNotAllowed(request.method, ['GET', 'HEAD']);
      },
    });
  }
}

/** The SDK's paths in the OpenAPI document (src/openapi.ts). */
export function sdkOpenApiPaths(version = sdkVersion()) {
  const paths: Record<string, { get: Record<string, unknown> }> = {};
  for (const { path, file, cacheControl } of sdkRoutes(version)) {
    const exact = cacheControl === EXACT_CACHE;
    const what = file === 'device.js' ? 'classic script (defines `window.RiskDevice`)' : 'ES module (`import { collect }`)';
    paths[path] = {
      get: {
        operationId: `sdk${file === 'device.js' ? 'Script' : 'Module'}${exact ? 'Exact' : ''}`,
        summary: `The device intelligence SDK, ${what}${exact ? `, version ${version}` : ''}`,
        description: `No key needed; CORS for any origin; \`Cache-Control: ${cacheControl}\`; gzip when accepted.`,
        responses: {
          200: { description: 'The script', content: { 'text/javascript': { schema: { type: 'string' } } } },
          304: { description: 'Not modified (`If-None-Match`)' },
        },
      },
    };
  }
  return paths;
}
