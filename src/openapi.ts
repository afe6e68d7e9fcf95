import { z } from 'zod';
import { ADMIN_ROUTES } from './admin/index.js';
import { adminPaths, adminSecuritySchemes, adminTags } from './admin/openapi.js';
import { STORE_CHECK } from './evaluation/evaluate.js';
import { evaluationRequestSchema } from './request/evaluation-request.js';
import { evaluationResponseSchema } from './evaluation/response.js';
import { problemCodes } from './http/problem.js';
import { eraseRequestSchema, eraseResponseSchema } from './http/routes/erase.js';
import { evaluationReviewSchema } from './http/routes/evaluation.js';
import { feedbackRequestSchema, feedbackResponseSchema } from './http/routes/feedback.js';
import { sdkOpenApiPaths } from './http/routes/sdk.js';
import { REQUEST_ID_PATTERN } from './http/request-id.js';

/**
 * The OpenAPI 3.1 document, generated from the same zod schemas that validate requests and type
 * responses, so the document cannot drift from the code. `docs/openapi.json` is this, committed
 * (`npm run openapi`; a test fails when it is stale).
 */
export const jsonSchema = (schema: z.ZodType, io: 'input' | 'output') => {
  const { $schema: _ignored, ...rest } = z.toJSONSchema(schema, { io, target: 'draft-2020-12', unrepresentable: 'any' }) as Record<string, unknown>;
  return rest;
};

const problemSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'instance', 'code'],
  properties: {
    type: { type: 'string', example: 'urn:risk-evaluation:problem:invalid_request' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    instance: {
      type: 'string',
      description: 'This occurrence: the request, by the id the `X-Request-Id` response header carries.',
      example: 'urn:risk-evaluation:request:5f0c6a8e-2b7d-4f5e-9a3c-0d1e2f3a4b5c',
    },
    code: { type: 'string', enum: Object.keys(problemCodes) },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: {
          path: { type: 'string', example: 'email' },
          message: { type: 'string' },
          file: { type: 'string', description: 'In a rule file: which one (`acme/account_register.yaml`).' },
          line: { type: 'integer', description: 'In a rule file sent as YAML: the line of the problem (from 1).' },
          column: { type: 'integer', description: 'In a rule file sent as YAML: the column of the problem (from 1).' },
        },
      },
    },
  },
};

/** Every response names the request it answers (see request-id.ts). */
const responseHeaders = {
  'X-Request-Id': { $ref: '#/components/headers/RequestId' },
  'X-Content-Type-Options': { $ref: '#/components/headers/ContentTypeOptions' },
};

const problem = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { ...responseHeaders, ...headers },
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
});

const ok = (description: string, content: Record<string, { schema: object; example?: unknown }>, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { ...responseHeaders, ...headers },
  content,
});

/** Answers under /v1 carry personal data. */
const noStore = { 'Cache-Control': { schema: { type: 'string', const: 'no-store' } } };

/** An operation with what every operation declares: who may call it, and the request id. */
const operation = <T extends object>(security: Array<Record<string, string[]>>, rest: T & { parameters?: object[] }) => ({
  ...rest,
  security,
  parameters: [{ $ref: '#/components/parameters/RequestId' }, ...(rest.parameters ?? [])],
});
/** No credentials: the probes and this document. */
const PUBLIC: Array<Record<string, string[]>> = [];
const API_KEY = [{ bearer: [] }];

/** The SDK's files: public, their responses with the headers every response carries. */
function sdkPaths() {
  return Object.fromEntries(
    Object.entries(sdkOpenApiPaths()).map(([path, { get }]) => {
      const responses = Object.fromEntries(
        Object.entries(get.responses as Record<string, object>).map(([status, response]) => [status, { ...response, headers: responseHeaders }]),
      );
      return [path, { get: operation(PUBLIC, { ...get, responses }) }];
    }),
  );
}

export function buildOpenApiDocument(version: string) {
  const admin = adminPaths(ADMIN_ROUTES, { operation, problem, ok, jsonSchema });
  return {
    openapi: '3.1.0',
    info: {
      title: 'Risk evaluation service',
      version,
      description: 'Scores a user event (registration, login…) from an IP address, an e-mail address and optional user and device data.',
      license: { name: 'MIT', identifier: 'MIT' },
    },
    servers: [
      { url: '/', description: 'The service that serves this document' },
      { url: 'http://localhost:3000', description: '`npm start` on your machine (PORT 3000)' },
    ],
    // Anything not marked otherwise needs an API key; the public operations say `security: []`.
    security: API_KEY,
    tags: [{ name: 'Public API' }, ...adminTags(ADMIN_ROUTES)],
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key: `Authorization: Bearer <key>`.' }, ...adminSecuritySchemes },
      parameters: {
        RequestId: {
          name: 'X-Request-Id',
          in: 'header',
          required: false,
          description: 'Your id for this request, echoed in the response, logged, and in a problem\'s `instance`. Replaced by a generated UUID unless it is 1–128 characters of letters, digits and `._~:@+=/-`, starting with a letter or digit.',
          schema: { type: 'string', pattern: REQUEST_ID_PATTERN },
        },
      },
      headers: {
        RequestId: { description: 'The request\'s id: the `X-Request-Id` sent, or one generated for it.', schema: { type: 'string' } },
        ContentTypeOptions: { schema: { type: 'string', const: 'nosniff' } },
      },
      schemas: {
        EvaluationRequest: jsonSchema(evaluationRequestSchema, 'input'),
        EvaluationResponse: jsonSchema(evaluationResponseSchema, 'output'),
        EvaluationReview: jsonSchema(evaluationReviewSchema, 'output'),
        FeedbackRequest: jsonSchema(feedbackRequestSchema, 'input'),
        FeedbackResponse: jsonSchema(feedbackResponseSchema, 'output'),
        EraseRequest: jsonSchema(eraseRequestSchema, 'input'),
        EraseResponse: jsonSchema(eraseResponseSchema, 'output'),
        Problem: problemSchema,
        ...admin.schemas,
      },
    },
    paths: {
      '/v1/risk/evaluate': {
        post: operation(API_KEY, {
          operationId: 'evaluateRisk',
          tags: ['Public API'],
          summary: 'Score one user event',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/EvaluationRequest' } } } },
          responses: {
            200: ok('The evaluation', { 'application/json': { schema: { $ref: '#/components/schemas/EvaluationResponse' } } }, noStore),
            400: problem('A field is missing or invalid (`errors` names each one), or the HTTP request is malformed', noStore),
            401: problem('The API key is missing or not valid', { 'WWW-Authenticate': { schema: { type: 'string' } }, ...noStore }),
            405: problem('Only POST is allowed', { Allow: { schema: { type: 'string' } }, ...noStore }),
            408: problem('The request, headers or body, did not arrive within REQUEST_TIMEOUT_MS'),
            413: problem('The body is larger than BODY_LIMIT_BYTES', noStore),
            415: problem('The body is not application/json', noStore),
            417: problem('An Expect header other than 100-continue'),
            429: problem("Rate limit of the key's account exceeded (both keys count together)", { 'Retry-After': { schema: { type: 'integer' } }, ...noStore }),
            431: problem('Request headers too large'),
            500: problem('An unexpected error; no internals are shown', noStore),
          },
        }),
      },
      '/v1/risk/evaluations/{id}': {
        get: operation(API_KEY, {
          operationId: 'getEvaluation',
          summary: 'An evaluation as it was answered, with its review\'s status and resolution (how a backend that held a sign-up learns the outcome)',
          parameters: [{ name: 'id', in: 'path', required: true, description: 'The evaluation\'s `id`.', schema: { type: 'string', format: 'uuid' } }],
          responses: {
            200: ok('The answer as sent, and `review`', {
              'application/json': {
                schema: {
                  allOf: [
                    { $ref: '#/components/schemas/EvaluationResponse' },
                    { type: 'object', required: ['review'], properties: { review: { $ref: '#/components/schemas/EvaluationReview' } } },
                  ],
                },
              },
            }, noStore),
            401: problem('The API key is missing or not valid', { 'WWW-Authenticate': { schema: { type: 'string' } }, ...noStore }),
            404: problem('This account has no such evaluation in its log (another account\'s, or older than RETENTION_DAYS)', noStore),
            503: problem('The store does not answer', { 'Retry-After': { schema: { type: 'integer' } }, ...noStore }),
          },
        }),
      },
      '/v1/risk/evaluations/{id}/feedback': {
        post: operation(API_KEY, {
          operationId: 'evaluationFeedback',
          summary: 'Label an evaluation fraud or legit (what your backend learned later); the latest label wins',
          parameters: [{ name: 'id', in: 'path', required: true, description: 'The evaluation\'s `id`.', schema: { type: 'string', format: 'uuid' } }],
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/FeedbackRequest' } } } },
          responses: {
            200: ok('The label, as stored', { 'application/json': { schema: { $ref: '#/components/schemas/FeedbackResponse' } } }, noStore),
            400: problem('`label` or `reason` is invalid (`errors` names each)', noStore),
            401: problem('The API key is missing or not valid', { 'WWW-Authenticate': { schema: { type: 'string' } }, ...noStore }),
            404: problem('This account has no such evaluation in its log (another account\'s, or older than RETENTION_DAYS)', noStore),
            503: problem('The store does not answer', { 'Retry-After': { schema: { type: 'integer' } }, ...noStore }),
          },
        }),
      },
      '/v1/risk/erase': {
        post: operation(API_KEY, {
          operationId: 'erasePerson',
          summary: 'Erase a person (GDPR Art. 17): their behaviour history, evaluations and labels in this account; answers what was removed',
          requestBody: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/EraseRequest' } } } },
          responses: {
            200: ok('What was removed', { 'application/json': { schema: { $ref: '#/components/schemas/EraseResponse' } } }, noStore),
            400: problem('Neither `user_id` nor `email`, or one is invalid', noStore),
            401: problem('The API key is missing or not valid', { 'WWW-Authenticate': { schema: { type: 'string' } }, ...noStore }),
            503: problem('The store does not answer', { 'Retry-After': { schema: { type: 'integer' } }, ...noStore }),
          },
        }),
      },
      '/healthz': {
        get: operation(PUBLIC, {
          operationId: 'health',
          summary: 'Liveness: the process answers',
          responses: { 200: ok('Alive', { 'application/json': { schema: statusSchema('ok') } }) },
        }),
      },
      '/readyz': {
        get: operation(PUBLIC, {
          operationId: 'ready',
          summary: 'Readiness: send traffic or not, and what the service runs without (the store when it is unreachable). Says nothing else; which sources are loaded is in the start-up log',
          responses: {
            200: ok('Ready: keys, rules and data are loaded', { 'application/json': { schema: readySchema } }),
            503: problem('Shutting down (draining)'),
          },
        }),
      },
      '/openapi.json': {
        get: operation(PUBLIC, {
          operationId: 'openapi',
          summary: 'This document',
          responses: { 200: ok('OpenAPI 3.1', { 'application/json': { schema: { type: 'object' } } }) },
        }),
      },
      ...sdkPaths(),
      ...admin.paths,
    },
  };
}

function statusSchema(value: string) {
  return { type: 'object', required: ['status'], properties: { status: { type: 'string', const: value } }, additionalProperties: false };
}

const readySchema = {
  type: 'object',
  required: ['status', 'unavailable'],
  properties: {
    status: { type: 'string', const: 'ready' },
    unavailable: {
      type: 'array',
      items: { type: 'string', enum: [STORE_CHECK] },
      description: 'Still ready, but degraded: `store` while the store is unreachable (evaluations answer without it, with `store` in their own `unavailable`).',
    },
  },
  additionalProperties: false,
};
