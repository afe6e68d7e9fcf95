// The framework's own ceiling: a bare Fastify route with the same bearer auth, the same request
// body (parsed), a response of the same bytes and one log line per request through the same pino
// configuration and log controller. The service is compared with this, in the same run.
import Fastify from 'fastify';
import bearerAuth from '@fastify/bearer-auth';
import { createLogger } from '../dist/logger.js';
import { requestIdFor } from '../dist/http/request-id.js';
import { OneLinePerRequest } from '../dist/http/request-log.js';
import { setCommonHeaders } from '../dist/http/response-headers.js';

const port = Number(process.env.PORT);
const key = process.env.API_KEYS;
const response = process.env.CEILING_RESPONSE ?? '{}';

const app = Fastify({
  loggerInstance: createLogger('info'),
  genReqId: requestIdFor,
  logController: new OneLinePerRequest({ requestIdLogLabel: 'request_id' }),
});
// The same headers as the service's answers: request id, nosniff, no-store.
app.addHook('onSend', (_request, reply, payload, done) => {
  setCommonHeaders(reply).header('cache-control', 'no-store');
  done(null, payload);
});
app.get('/readyz', async () => ({ status: 'ready' }));
await app.register(async (v1) => {
  await v1.register(bearerAuth, { keys: [key], specCompliance: 'rfc6749' });
  v1.post('/v1/risk/evaluate', async (_request, reply) => reply.type('application/json; charset=utf-8').send(response));
});
await app.listen({ port, host: '127.0.0.1' });
