// The framework's own ceiling: a bare Fastify route with the same bearer auth, the same request
// body (parsed), a response of the same bytes and one log line per request through the same pino
// configuration. The service is compared with this, in the same run, on the same machine.
import Fastify from 'fastify';
import bearerAuth from '@fastify/bearer-auth';
import { createLogger } from '../dist/logger.js';

const port = Number(process.env.PORT);
const key = process.env.API_KEYS;
const response = process.env.CEILING_RESPONSE ?? '{}';

const app = Fastify({ loggerInstance: createLogger('info'), disableRequestLogging: true });
await app.register(bearerAuth, { keys: [key], specCompliance: 'rfc6749' });
app.addHook('onResponse', async (request, reply) => {
  request.log.info({ method: request.method, url: request.url, status: reply.statusCode, ms: reply.elapsedTime }, 'request');
});
app.post('/v1/risk/evaluate', async (_request, reply) => reply.type('application/json; charset=utf-8').send(response));
app.get('/readyz', async () => ({ status: 'ready' }));
await app.listen({ port, host: '127.0.0.1' });
