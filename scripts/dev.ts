import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { createServer } from 'vite';

/**
 * `npm run dev`: the service restarted on every change of src/ (tsx watch, on $PORT), and the web
 * console served by Vite with hot reload on http://127.0.0.1:5173/console/, proxying /admin, /v1
 * and /sdk to the service (console/vite.config.ts). Ctrl+C stops both.
 */
const root = fileURLToPath(new URL('..', import.meta.url));
const tsx = createRequire(import.meta.url).resolve('tsx/cli');
const service = spawn(process.execPath, [tsx, 'watch', 'src/server.ts'], { cwd: root, stdio: 'inherit' });
const console_ = await createServer({ configFile: `${root}console/vite.config.ts` });
await console_.listen();
console_.printUrls();

let stopping = false;
async function stop(code: number) {
  if (stopping) return;
  stopping = true;
  service.kill('SIGTERM');
  await console_.close();
  process.exit(code);
}
service.on('exit', (code) => void stop(code ?? 0));
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));
