import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build, type BuildOptions } from 'esbuild';
// The version is read where the service reads it to name the exact-version path.
import { sdkVersion } from '../src/http/routes/sdk.js';

/**
 * Builds the device intelligence SDK (`sdk/src`) into `sdk/dist`: `device.js`, a classic script
 * that defines `window.RiskDevice`, and `device.mjs`, an ES module. The service serves both
 * (src/http/routes/sdk.ts); `sdk/package.json` packs them for npm. Part of `npm run build`.
 */

const root = fileURLToPath(new URL('..', import.meta.url));
export const SDK_DIST = join(root, 'sdk', 'dist');
/** The SDK must stay small enough to load on every sign-up page (gzipped, per file). */
export const MAX_GZIP_BYTES = 20 * 1024;

export interface BuiltFile {
  file: string;
  bytes: number;
  gzipBytes: number;
  /** Subresource Integrity value (SHA-384), for `<script integrity>`. */
  integrity: string;
}

export const sriOf = (content: Buffer | string) => `sha384-${createHash('sha384').update(content).digest('base64')}`;

const common: BuildOptions = {
  entryPoints: [join(root, 'sdk', 'src', 'index.ts')],
  bundle: true,
  minify: true,
  // Browsers of the last five years; nothing newer than ES2020 is used.
  target: 'es2020',
  platform: 'browser',
  legalComments: 'none',
  define: { __SDK_VERSION__: JSON.stringify(sdkVersion()) },
  write: false,
  logLevel: 'silent',
};

export async function buildSdk(outdir = SDK_DIST): Promise<BuiltFile[]> {
  const outputs = [
    { file: 'device.js', options: { format: 'iife', globalName: 'RiskDevice' } },
    { file: 'device.mjs', options: { format: 'esm' } },
  ] as const;
  mkdirSync(outdir, { recursive: true });
  const built: BuiltFile[] = [];
  for (const { file, options } of outputs) {
    const result = await build({ ...common, ...options, outfile: join(outdir, file) });
    const content = Buffer.from(result.outputFiles![0]!.contents);
    writeFileSync(join(outdir, file), content);
    built.push({ file, bytes: content.length, gzipBytes: gzipSync(content, { level: 9 }).length, integrity: sriOf(content) });
  }
  return built;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const built = await buildSdk();
  for (const file of built) {
    console.log(`sdk/dist/${file.file}  ${file.bytes} bytes, ${file.gzipBytes} gzipped  integrity ${file.integrity}`);
  }
  const tooBig = built.filter((file) => file.gzipBytes > MAX_GZIP_BYTES);
  if (tooBig.length > 0) {
    console.error(`The SDK is over ${MAX_GZIP_BYTES} bytes gzipped: ${tooBig.map((f) => f.file).join(', ')}`);
    process.exit(1);
  }
}
