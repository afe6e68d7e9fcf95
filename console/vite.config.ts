import { fileURLToPath } from 'node:url';
import preact from '@preact/preset-vite';
import { defineConfig } from 'vite';

/**
 * The web console's build (`npm run build`, into console/dist, served by the service at
 * /console/) and its development server (`npm run dev`: hot reload on :5173, the API proxied to
 * the service on $PORT, default 3000).
 */
const api = `http://127.0.0.1:${process.env.PORT ?? 3000}`;

export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/console/',
  plugins: [preact()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2020',
    // One small app: no inline <script> (the CSP forbids it) and no source maps in the image.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
    reportCompressedSize: false,
  },
  server: {
    host: '127.0.0.1',
    port: 5173,
    strictPort: true,
    proxy: { '/admin': api, '/v1': api, '/sdk': api },
  },
  clearScreen: false,
});
