import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

/**
 * One log line per request, written when the response is sent. Fastify's default two lines per
 * request cost about a quarter of throughput; an evaluation's line carries what an operator needs
 * (id, event type, score, state, rules fired, time) and never the e-mail's local part or the key.
 */
/** Load-balancer probes every few seconds would drown the log at info. */
const PROBES = new Set(['/healthz', '/readyz']);

export class OneLinePerRequest extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const line = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      ...request.evaluationLog,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else if (PROBES.has(request.url) && reply.statusCode === 200) reply.log.debug(line, 'probe');
    else reply.log.info(line, request.evaluationLog ? 'evaluation' : 'request');
  }
}
