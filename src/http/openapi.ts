import { z } from 'zod';
import { evaluationRequestSchema } from '../evaluation/request.js';
import { evaluationResponseSchema } from '../evaluation/response.js';
import { problemCodes } from './problem.js';

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests and type
 * responses, so the document cannot drift from the code. `docs/openapi.json` is this, committed
 * (`npm run openapi`; a test fails when it is stale).
 */
const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string', example: 'urn:risk-evaluation:problem:invalid_request' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', enum: Object.keys(problemCodes) },
    errors: {
      type: 'array',
      items: { type: 'object', required: ['path', 'message'], properties: { path: { type: 'string', example: 'email' }, message: { type: 'string' } } },
    },
  },
};

const problem = (description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

export function buildOpenApiDocument(version: string) {
  return {
    openapi: '3.1.0',
    info: {
      title: 'Risk evaluation service',
      version,
      description: 'Scores a user event (registration, login…) from an IP address, an e-mail address and optional user and device data.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <key>`.' } },
      schemas: {
        EvaluationRequest: jsonSchema(evaluationRequestSchema, 'input'),
        EvaluationResponse: jsonSchema(evaluationResponseSchema, 'output'),
        Problem: problemSchema,
      },
    },
    paths: {
      '/v1/risk/evaluate': {
        post: {
          operationId: 'evaluateRisk',
          summary: 'Score one user event',
          security: [{ bearer: [] }],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/EvaluationRequest' } } } },
          responses: {
            200: { description: 'The evaluation', content: { 'application/json': { schema: { $ref: '#/components/schemas/EvaluationResponse' } } } },
            400: problem('A field is missing or invalid; `errors` names each one'),
            401: problem('The API key is missing or not valid', { 'WWW-Authenticate': { schema: { type: 'string' } } }),
            405: problem('Only POST is allowed', { Allow: { schema: { type: 'string' } } }),
            413: problem('The body is larger than BODY_LIMIT_BYTES'),
            415: problem('The body is not application/json'),
            408: problem('The request did not arrive within REQUEST_TIMEOUT_MS'),
            417: problem('An Expect header other than 100-continue'),
            429: problem("Rate limit of the key's account exceeded (both keys count together)", { 'Retry-After': { schema: { type: 'integer' } } }),
            431: problem('Request headers too large'),
            500: problem('An unexpected error; no internals are shown'),
          },
        },
      },
      '/healthz': { get: { operationId: 'health', summary: 'Liveness', responses: { 200: { description: 'The process answers' } } } },
      '/readyz': {
        get: {
          operationId: 'ready',
          summary: 'Readiness: send traffic or not. Says nothing else; which sources are loaded is in the start-up log',
          responses: {
            200: {
              description: 'Ready: keys, rules and data are loaded',
              content: { 'application/json': { schema: { type: 'object', required: ['status'], properties: { status: { type: 'string', const: 'ready' } }, additionalProperties: false } } },
            },
            503: problem('Shutting down (draining)'),
          },
        },
      },
      '/openapi.json': { get: { operationId: 'openapi', summary: 'This document', responses: { 200: { description: 'OpenAPI 3.1' } } } },
    },
  };
}
