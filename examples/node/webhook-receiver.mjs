// A webhook receiver that checks the service's signature (Standard Webhooks: webhook-id,
// webhook-timestamp, webhook-signature "v1,<base64 HMAC-SHA256>"). Node.js 18 or newer, nothing to install.
//   WEBHOOK_SECRET=whsec_... PORT=8080 node examples/node/webhook-receiver.mjs
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer } from 'node:http';

const TOLERANCE_SECONDS = 5 * 60; // an older delivery is refused: a replayed capture, not a retry

/** True when any signature in the header is the secret's over `${id}.${timestamp}.${body}`. */
export function verifyWebhook(secret, headers, body, nowSeconds = Math.floor(Date.now() / 1000)) {
  const id = headers['webhook-id'];
  const timestamp = Number(headers['webhook-timestamp']);
  const signatures = headers['webhook-signature'];
  if (!id || !signatures || !Number.isInteger(timestamp) || Math.abs(nowSeconds - timestamp) > TOLERANCE_SECONDS) return false;
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = Buffer.from(`v1,${createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64')}`);
  // Two signatures while the secret is rotated: either one is enough.
  return signatures.split(' ').some((s) => Buffer.byteLength(s) === expected.length && timingSafeEqual(Buffer.from(s), expected));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret) throw new Error('set WEBHOOK_SECRET to the endpoint\'s signing secret');
  createServer((request, response) => {
    const chunks = [];
    request.on('data', (c) => chunks.push(c));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8'); // verify the exact bytes, before parsing
      if (!verifyWebhook(secret, request.headers, body)) {
        response.writeHead(400).end('bad signature');
        return;
      }
      const event = JSON.parse(body);
      console.log(`verified ${event.type} ${request.headers['webhook-id']}`);
      response.writeHead(204).end(); // answer fast; do the work after
    });
  }).listen(Number(process.env.PORT ?? 8080), '127.0.0.1', () => console.log('listening'));
}
