import type { FastifyInstance } from 'fastify';
import sjson from 'secure-json-parse';
import { problems } from './problem.js';

/**
 * The only body this API takes is JSON. Fastify's default parser answers every failure with one
 * message; ours says where the syntax broke and names a forbidden `__proto__`/`constructor` key.
 * secure-json-parse is the parser Fastify itself uses against prototype poisoning.
 */
export function acceptJsonOnly(scope: FastifyInstance): void {
  scope.removeAllContentTypeParsers();
  scope.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    const text = body as string;
    if (text.length === 0) return done(problems.invalidJson('The body is empty; send a JSON object'), undefined);
    try {
      done(null, sjson.parse(text, null, { protoAction: 'error', constructorAction: 'error' }));
    } catch (error) {
      const message = (error as Error).message;
      const detail = /prototype/i.test(message)
        ? 'The body contains a forbidden "__proto__" or "constructor.prototype" key'
        : `The body is not valid JSON: ${message}`;
      done(problems.invalidJson(detail), undefined);
    }
  });
}
