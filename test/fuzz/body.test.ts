import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { expectEvaluation, expectProblem } from '../support/contract.js';
import { expectContract, expectHealthy, fuzzOptions, postEvaluate } from '../support/fuzz.js';

/**
 * Request bodies: whatever JSON, almost-JSON or bytes arrive, the answer is a 200 evaluation or a
 * problem naming real fields, never a 5xx, and the process keeps serving.
 * The body limit is raised to 1 MiB here so that 10,000 levels of nesting fit under it.
 */
const BODY_LIMIT = 1024 * 1024;
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ BODY_LIMIT_BYTES: String(BODY_LIMIT) });
});
afterAll(async () => {
  await t.app.close();
});

const POISON_KEYS = ['__proto__', 'constructor', 'prototype', 'toString', 'hasOwnProperty', 'valueOf', '__defineGetter__'];

/** Strings of every kind: ASCII, any code point, lone surrogates, controls, and names that are traps. */
const anyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', '\u0000', '\ud800', '\udfff', '\u202e', '\ufeff', 'null', 'undefined', 'NaN', ...POISON_KEYS),
);

/** A value of any JSON type, where a field expects another: numbers, arrays, null, booleans, objects. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { maxDepth: 3 },
  anyString,
  fc.integer(),
  fc.double(), // NaN and ±Infinity serialise as null
  fc.constantFrom(0, -0, 1e308, -1e-308, Number.MAX_SAFE_INTEGER + 2),
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.dictionary(fc.constantFrom(...POISON_KEYS.filter((k) => k !== '__proto__'), 'a', 'ip'), fc.jsonValue({ maxDepth: 2 })),
);

/** A field: kept valid, dropped, or replaced by anything. */
const field = <T>(valid: fc.Arbitrary<T>) =>
  fc.oneof({ weight: 3, arbitrary: valid.map((v) => ({ value: v as unknown })) }, { weight: 1, arbitrary: fc.constant(undefined) }, { weight: 2, arbitrary: anyJson.map((v) => ({ value: v })) });

const validUser = fc.record({ user_id: fc.string({ maxLength: 20 }), first_name: fc.string({ maxLength: 20 }), last_name: fc.string({ maxLength: 20 }) }, { requiredKeys: [] });
const validDevice = fc.record(
  {
    device_hash: fc.stringMatching(/^[0-9a-f]{64}$/),
    device_os: fc.string({ maxLength: 20 }),
    device_model: fc.string({ maxLength: 20 }),
    browser_hash: fc.stringMatching(/^[0-9a-f]{64}$/),
    browser_name: fc.string({ maxLength: 20 }),
    browser_version: fc.string({ maxLength: 20 }),
    cookie_enabled: fc.boolean(),
  },
  { requiredKeys: [] },
);

/** A nested object with some of its fields mutated the same way. */
const mutated = (valid: fc.Arbitrary<Record<string, unknown>>) =>
  fc.tuple(valid, fc.dictionary(fc.constantFrom('user_id', 'first_name', 'last_name', 'device_hash', 'cookie_enabled', 'browser_version', 'extra'), anyJson, { maxKeys: 3 })).map(([v, m]) => ({ ...v, ...m }));

const body = fc
  .record({
    ip: field(fc.oneof(fc.ipV4(), fc.ipV6())),
    email: field(fc.emailAddress().filter((e) => e.length <= 254)),
    event_type: field(fc.constantFrom('account_register', 'account_login', 'password_reset', 'account_update')),
    user: field(mutated(validUser)),
    device_intelligence: field(mutated(validDevice)),
    extra: fc.dictionary(anyString.filter((k) => k !== '__proto__'), anyJson, { maxKeys: 3 }),
  })
  .map(({ extra, ...fields }) => {
    const out: Record<string, unknown> = { ...extra };
    for (const [name, f] of Object.entries(fields)) if (f !== undefined) out[name] = f.value;
    return out;
  });

describe('fuzz: request bodies', () => {
  it('any mix of valid, missing and wrong-typed fields: 200 or a problem naming real fields', async () => {
    await fc.assert(
      fc.asyncProperty(body, async (payload) => {
        const response = await postEvaluate(t, payload);
        const answer = expectContract(response);
        // Every field the problem names is one that was really wrong, and vice versa for required ones.
        if (response.statusCode === 400 && answer.code === 'invalid_request') {
          for (const required of ['ip', 'email', 'event_type']) {
            if (!(required in payload)) expect(answer.errors.map((e: { path: string }) => e.path)).toContain(required);
          }
        }
      }),
      fuzzOptions(2500),
    );
  });

  it('every field valid: always 200, echoing what was sent', async () => {
    const valid = fc.record(
      {
        ip: fc.oneof(fc.ipV4(), fc.ipV6()),
        email: fc.emailAddress().filter((e) => e.length <= 254),
        event_type: fc.constantFrom('account_register', 'account_login', 'password_reset', 'account_update'),
        user: validUser,
        device_intelligence: validDevice,
      },
      { requiredKeys: ['ip', 'email', 'event_type'] },
    );
    await fc.assert(
      fc.asyncProperty(valid, async (payload) => {
        const response = await postEvaluate(t, payload);
        const answer = expectEvaluation(response);
        expect(answer.event_type).toBe(payload.event_type);
        expect(answer.email.address).toBe(payload.email);
        expect(answer.email.domain).toBe(answer.email.domain.toLowerCase());
      }),
      fuzzOptions(1500),
    );
  });

  it('any text as the body: never a 5xx', async () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 200 }),
      fc.json({ maxDepth: 4 }),
      // Valid bodies, truncated or with one character changed.
      fc.tuple(fc.nat({ max: 120 }), fc.constant(JSON.stringify(evaluationBody()))).map(([n, s]) => s.slice(0, n)),
      fc.tuple(fc.nat({ max: 90 }), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })).map(([i, c]) => {
        const s = JSON.stringify(evaluationBody());
        return s.slice(0, i) + c + s.slice(i + 1);
      }),
    );
    await fc.assert(
      fc.asyncProperty(text, async (payload) => {
        expectContract(await postEvaluate(t, payload));
      }),
      fuzzOptions(1500),
    );
  });

  it('any bytes as the body (invalid UTF-8, UTF-16, BOMs): never a 5xx', async () => {
    const bytes = fc.oneof(
      fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
      fc.constant(Buffer.from(JSON.stringify(evaluationBody()), 'utf16le')),
      fc.constant(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(JSON.stringify(evaluationBody()), 'utf16le')])),
      fc.constant(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(JSON.stringify(evaluationBody()))])),
      fc.constant(Buffer.from(JSON.stringify(evaluationBody({ email: 'jane@bücher.de' })), 'latin1')),
    );
    await fc.assert(
      fc.asyncProperty(bytes, async (payload) => {
        expectContract(await postEvaluate(t, payload));
      }),
      fuzzOptions(500),
    );
  });

  it('duplicate keys in the raw JSON text: the last one wins, exactly as if sent alone', async () => {
    const value = fc.oneof(fc.constant('"81.2.69.160"'), fc.constant('"jane@example.com"'), fc.constant('"account_register"'), fc.json({ maxDepth: 1 }));
    const member = fc.tuple(fc.constantFrom('ip', 'email', 'event_type', 'user'), value);
    const members = fc.array(member, { minLength: 1, maxLength: 8 });
    await fc.assert(
      fc.asyncProperty(members, async (pairs) => {
        const base = evaluationBody() as Record<string, unknown>;
        const text = `{${[...Object.entries(base).map(([k, v]) => [k, JSON.stringify(v)]), ...pairs].map(([k, v]) => `"${k}":${v}`).join(',')}}`;
        const raw = await postEvaluate(t, text);
        const alone = await postEvaluate(t, JSON.stringify(JSON.parse(text)));
        expectContract(raw);
        expect(raw.statusCode).toBe(alone.statusCode);
        // The same problem, but for `instance`: each request has its own id.
        if (raw.statusCode !== 200) expect({ ...raw.json(), instance: null }).toEqual({ ...alone.json(), instance: null });
      }),
      fuzzOptions(800),
    );
  });

  it('__proto__, constructor and prototype keys at any depth: refused or ignored, never obeyed', async () => {
    const key = fc.constantFrom('__proto__', 'constructor', 'prototype');
    const nested = fc.tuple(fc.nat({ max: 30 }), key, fc.constantFrom('{"polluted":true}', '{"prototype":{"polluted":true}}', '1', 'null', '[]'), fc.constantFrom('extra', 'user', 'device_intelligence', 'ip'));
    await fc.assert(
      fc.asyncProperty(nested, async ([depth, name, value, at]) => {
        const inner = `${'{"a":'.repeat(depth)}{"${name}":${value}}${'}'.repeat(depth)}`;
        const text = JSON.stringify(evaluationBody()).replace(/}$/, `,"${at}":${inner}}`);
        const response = await postEvaluate(t, text);
        const answer = expectContract(response);
        if (name === '__proto__' || (name === 'constructor' && value.includes('prototype'))) {
          expect(response.statusCode).toBe(400);
          expect(answer.code).toBe('invalid_json');
        }
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
        expect((Object.prototype as Record<string, unknown>).polluted).toBeUndefined();
      }),
      fuzzOptions(800),
    );
  });

  it('10,000 and 100,000 levels of nesting, anywhere in the body', async () => {
    for (const depth of [10_000, 100_000]) {
      const arrays = '['.repeat(depth) + ']'.repeat(depth);
      const objects = '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
      const mixed = '[{"a":'.repeat(depth) + '1' + '}]'.repeat(depth);
      for (const deep of [arrays, objects, mixed]) {
        for (const at of ['extra', 'ip', 'user', 'device_intelligence']) {
          const text = JSON.stringify(evaluationBody()).replace(/}$/, `,"${at}":${deep}}`);
          const response = await postEvaluate(t, text);
          if (text.length > BODY_LIMIT) expectProblem(response, 413, 'payload_too_large');
          // Unknown keys are ignored, also inside user and device_intelligence: only a wrong type is refused.
          else if (at === 'extra' || (deep === objects && at !== 'ip')) expectEvaluation(response);
          else expect(expectProblem(response, 400, 'invalid_request').errors!.map((e) => e.path)).toEqual([at]);
        }
        // The nested value as the whole body, and unterminated.
        expectContract(await postEvaluate(t, deep));
        expectContract(await postEvaluate(t, deep.slice(0, deep.length / 2)));
      }
    }
    // Objects 10,000 deep with a __proto__ at the bottom: found and refused, not a stack overflow.
    const poisoned = '{"a":'.repeat(10_000) + '{"__proto__":{"x":1}}' + '}'.repeat(10_000);
    expectProblem(await postEvaluate(t, JSON.stringify(evaluationBody()).replace(/}$/, `,"extra":${poisoned}}`)), 400, 'invalid_json');
  });

  it('bodies near the limit: 413 exactly when the bytes, not the characters, exceed it', async () => {
    const filler = fc.constantFrom('x', 'é', '€', '😀', '\\u0000');
    const size = fc.integer({ min: BODY_LIMIT - 64, max: BODY_LIMIT + 64 });
    await fc.assert(
      fc.asyncProperty(filler, size, fc.constantFrom('extra', 'email', 'ip'), async (unit, target, at) => {
        const skeleton = JSON.stringify(evaluationBody({ [at]: '' }));
        const room = target - Buffer.byteLength(skeleton);
        const text = skeleton.replace(`"${at}":""`, `"${at}":"${unit.repeat(Math.max(0, Math.floor(room / Buffer.byteLength(unit))))}"`);
        const bytes = Buffer.byteLength(text);
        const response = await postEvaluate(t, text);
        if (bytes > BODY_LIMIT) expectProblem(response, 413, 'payload_too_large');
        else if (at === 'extra') expectEvaluation(response);
        else expect(expectProblem(response, 400, 'invalid_request').errors!.map((e) => e.path)).toEqual([at]);
      }),
      fuzzOptions(100),
    );
    // Far over the limit: refused without reading it all.
    expectProblem(await postEvaluate(t, JSON.stringify(evaluationBody({ email: `${'a'.repeat(5 * BODY_LIMIT)}@example.com` }))), 413, 'payload_too_large');
  });

  it('an object with a length where a string belongs: one error, the type, not a nonsense length', async () => {
    for (const at of ['ip', 'email', 'event_type']) {
      const problem = expectProblem(await postEvaluate(t, evaluationBody({ [at]: { length: 1000 } })), 400, 'invalid_request');
      expect(problem.errors).toEqual([{ path: at, message: expect.stringMatching(/expected string/) }]);
    }
    const nested = expectProblem(await postEvaluate(t, evaluationBody({ user: { first_name: { length: 1000 } } })), 400, 'invalid_request');
    expect(nested.errors).toEqual([{ path: 'user.first_name', message: expect.stringMatching(/expected string/) }]);
  });

  it('is healthy afterwards', async () => {
    await expectHealthy(t);
  });
});
