import { isIP } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluationBody, startTestApp, type TestApp } from '../support/app.js';
import { expectEvaluation, expectProblem } from '../support/contract.js';
import { expectContract, expectHealthy, fuzzOptions, postEvaluate } from '../support/fuzz.js';

/**
 * The two addresses of the request in every notation people, libraries and attackers use. PRODUCT.md:
 * `ip` is an IPv4 or IPv6 address (IPv4-mapped IPv6 read as IPv4); `email` has one `@`, at most 254
 * characters, and its domain may be internationalised. Anything else is a 400 naming that field alone.
 */
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(async () => {
  await t.app.close();
});

const evaluateIp = (ip: unknown) => postEvaluate(t, evaluationBody({ ip }));
const evaluateEmail = (email: unknown) => postEvaluate(t, evaluationBody({ email }));

function expectRefused(response: Awaited<ReturnType<typeof evaluateIp>>, field: 'ip' | 'email', sent?: unknown): void {
  // fc.jsonValue() may build {"__proto__": …}, which the JSON parser refuses before any field is read.
  // Only a key counts: the string "__proto__" as a value is an ordinary bad address (in JSON text a
  // key is the only place a closing quote is followed by a colon).
  if (JSON.stringify(sent ?? null).includes('"__proto__":')) {
    expectProblem(response, 400, 'invalid_json');
    return;
  }
  const problem = expectProblem(response, 400, 'invalid_request');
  expect(problem.errors!.map((e) => e.path)).toEqual([field]);
}

const octets = fc.tuple(fc.nat(255), fc.nat(255), fc.nat(255), fc.nat(255));
const quad = (o: (number | string)[]) => o.join('.');

/** Spellings of an IPv4 address that inet_aton, browsers or URL parsers accept but are not dotted-quad decimal. */
const ipv4Oddities = fc.oneof(
  octets.chain((o) => fc.nat(3).map((i) => quad(o.map((x, j) => (j === i ? `0${x}` : String(x)))))), // leading zero
  octets.chain((o) => fc.nat(3).map((i) => quad(o.map((x, j) => (j === i ? `0x${x.toString(16)}` : String(x)))))), // hex part
  octets.map((o) => `0${o[0]!.toString(8)}.${o.slice(1).join('.')}`), // octal
  octets.map((o) => `${o[0]}.${(o[1]! << 16) + (o[2]! << 8) + o[3]!}`), // short form, 127.1
  octets.map((o) => `${o[0]}.${o[1]}.${(o[2]! << 8) + o[3]!}`), // short form, 127.0.1
  octets.map((o) => String(((o[0]! << 24) >>> 0) + (o[1]! << 16) + (o[2]! << 8) + o[3]!)), // one integer
  octets.map((o) => `0x${o.map((x) => x.toString(16).padStart(2, '0')).join('')}`), // one hex integer
  fc.constantFrom('0x7f.1', '127.1', '0177.0.0.1', '127.0.0.1.', '127.0.0.1..', '1.2.3', '1.2.3.4.5', '256.1.1.1', '-1.2.3.4', '1.2.3.4/24', '1.2.3.4:80', '１.２.３.４', '1.2.3.4\u0000', '1.2.3.4\n'),
);

/** Decorations that make any address text something other than an address. */
const decorate = (ip: string) =>
  fc.constantFrom(
    ...(ip.includes('.') ? [ip.replace(/\./g, '. ')] : []),
    ` ${ip}`, `${ip} `, `\t${ip}`, `${ip}.`, `[${ip}]`, `${ip}/32`, `"${ip}"`, `${ip}\u200b`, `${ip}%eth0`, `${ip}%25eth0`, `${ip}%0`, `${ip}\ufeff`,
  );

describe('fuzz: IP notations', () => {
  it('dotted-quad IPv4: accepted and echoed as sent', async () => {
    await fc.assert(
      fc.asyncProperty(fc.ipV4(), async (ip) => {
        const body = expectEvaluation(await evaluateIp(ip));
        expect(body.ip).toMatchObject({ address: ip, version: 4 });
      }),
      fuzzOptions(400),
    );
  });

  it('IPv6 in any valid spelling: accepted, in one canonical lower-case form', async () => {
    const spelled = fc.tuple(fc.ipV6(), fc.boolean()).map(([ip, upper]) => (upper ? ip.toUpperCase() : ip));
    await fc.assert(
      fc.asyncProperty(spelled, async (ip) => {
        const body = expectEvaluation(await evaluateIp(ip));
        expect(isIP(body.ip.address)).toBe(body.ip.version);
        expect(body.ip.address).toBe(body.ip.address.toLowerCase());
        // Canonical means a fixed point: sending the answer back gives the same answer.
        const again = expectEvaluation(await evaluateIp(body.ip.address));
        expect(again.ip).toMatchObject({ address: body.ip.address, version: body.ip.version });
      }),
      fuzzOptions(400),
    );
  });

  it('IPv4-mapped IPv6 (::ffff:a.b.c.d, any spelling) is the IPv4 address', async () => {
    const mapped = fc.tuple(octets, fc.constantFrom('::ffff:', '::FFFF:', '0:0:0:0:0:ffff:', '0000:0000:0000:0000:0000:FFFF:', '::0:ffff:'), fc.boolean()).map(([o, prefix, hex]) => ({
      ip: hex ? `${prefix}${((o[0]! << 8) + o[1]!).toString(16)}:${((o[2]! << 8) + o[3]!).toString(16)}` : `${prefix}${quad(o)}`,
      v4: quad(o),
    }));
    await fc.assert(
      fc.asyncProperty(mapped, async ({ ip, v4 }) => {
        const body = expectEvaluation(await evaluateIp(ip));
        expect(body.ip).toMatchObject({ address: v4, version: 4 });
      }),
      fuzzOptions(300),
    );
  });

  it('leading zeros, hex, octal, short and integer forms of IPv4: refused, naming ip', async () => {
    await fc.assert(
      fc.asyncProperty(ipv4Oddities, async (ip) => {
        expectRefused(await evaluateIp(ip), 'ip');
      }),
      fuzzOptions(400),
    );
  });

  it('zones, brackets, ports, prefixes, spaces and trailing dots around any address: refused, naming ip', async () => {
    const decorated = fc.oneof(fc.ipV4(), fc.ipV6(), fc.constant('::1'), fc.constant('fe80::1')).chain(decorate);
    await fc.assert(
      fc.asyncProperty(decorated, async (ip) => {
        expectRefused(await evaluateIp(ip), 'ip');
      }),
      fuzzOptions(400),
    );
  });

  it('any string or any JSON value as ip: 200 only for an address, otherwise a 400 naming ip', async () => {
    const anything = fc.oneof(fc.string({ unit: 'binary', maxLength: 70 }), fc.stringMatching(/^[0-9a-fA-F:.%[\] ]{0,50}$/), fc.jsonValue({ maxDepth: 2 }));
    await fc.assert(
      fc.asyncProperty(anything, async (ip) => {
        const response = await evaluateIp(ip);
        if (typeof ip === 'string' && isIP(ip) !== 0 && !ip.includes('%')) expectEvaluation(response);
        else expectRefused(response, 'ip', ip);
      }),
      fuzzOptions(500),
    );
  });
});

/** Local parts and domain labels from every script and trap: IDN, RTL, emoji, combining marks, controls. */
const INTERNATIONAL = ['bücher', '例子', '广告', 'пример', 'مثال', 'דוגמה', 'παράδειγμα', 'उदाहरण', '😀', 'e\u0301', 'ß', 'İ', 'ﬁ', 'Ⅻ', 'straße'];
const TRAPS = ['\u0000', '\ud800', '\udfff', '\u202e', '\u200b', '\u200d', '\ufeff', ' ', '\t', '\n', '%40', '%', '"', '\\', '..', '.', '-', '(comment)', '<', '>'];

const localPart = fc.oneof(
  fc.stringMatching(/^[a-z0-9._%+-]{1,20}$/),
  fc.constantFrom('用户', 'δοκιμή', 'пользователь', 'מִשְׁתַּמֵּשׁ', 'user\u202egro', '😀', 'e\u0301', '"quoted local"', 'a+tag', 'A.B'),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 10 }),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 10 }),
);
const label = fc.oneof(fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?$/), fc.constantFrom(...INTERNATIONAL), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }));
const tld = fc.oneof(fc.constantFrom('com', 'de', 'XN--55QX5D', '广告', 'рф', 'テスト', '123', 'c0m'), label);
const domain = fc.tuple(fc.array(label, { minLength: 1, maxLength: 3 }), tld, fc.boolean()).map(([labels, top, dot]) => `${[...labels, top].join('.')}${dot ? '.' : ''}`);
/** An address with, now and then, one trap character spliced in somewhere. */
const email = fc
  .tuple(localPart, domain, fc.option(fc.tuple(fc.constantFrom(...TRAPS), fc.nat(80)), { freq: 3 }))
  .map(([local, host, trap]) => {
    const address = `${local}@${host}`;
    if (!trap) return address;
    const at = trap[1] % (address.length + 1);
    return address.slice(0, at) + trap[0] + address.slice(at);
  });

describe('fuzz: e-mail addresses', () => {
  it('international and hostile addresses: a 200 that echoes the address, or a 400 naming email', async () => {
    await fc.assert(
      fc.asyncProperty(email, async (address) => {
        const response = await evaluateEmail(address);
        if (response.statusCode !== 200) return expectRefused(response, 'email');
        const body = expectEvaluation(response);
        expect(body.email.address).toBe(address);
        // The domain is DNS-ready: lower-case ASCII (IDN as punycode), no trailing dot.
        expect(body.email.domain).toMatch(/^[a-z0-9-]+(\.[a-z0-9-]+)+$/);
        expect(body.email.normalized.endsWith(`@${body.email.domain}`)).toBe(true);
        // The local part is kept as sent.
        expect(body.email.normalized.slice(0, body.email.normalized.lastIndexOf('@'))).toBe(address.slice(0, address.lastIndexOf('@')));
      }),
      fuzzOptions(1500),
    );
  });

  it('the domain is case-insensitive; a trailing dot on it is refused (RFC 5321 has none)', async () => {
    // A dot-string local part (RFC 5321 §4.1.2): dots only between characters.
    const valid = fc.tuple(fc.stringMatching(/^[a-z0-9_+-]{1,8}(\.[a-z0-9_+-]{1,8}){0,2}$/), fc.constantFrom('example.com', 'bücher.de', '例子.广告', 'пример.рф', 'xn--bcher-kva.de'));
    await fc.assert(
      fc.asyncProperty(valid, async ([local, host]) => {
        const plain = expectEvaluation(await evaluateEmail(`${local}@${host}`));
        const shouted = expectEvaluation(await evaluateEmail(`${local}@${host.toUpperCase()}`));
        expect(shouted.email.domain).toBe(plain.email.domain);
        expectRefused(await evaluateEmail(`${local}@${host}.`), 'email');
      }),
      fuzzOptions(300),
    );
  });

  it('every accepted local part is a dot-atom of at most 64 octets, with no quote, bracket, backslash or space', async () => {
    const anyLocal = fc.oneof(localPart, fc.string({ unit: 'binary', minLength: 1, maxLength: 70 }), fc.stringMatching(/^[a-zA-Z0-9."\\()[\],:;<> ü]{1,70}$/));
    await fc.assert(
      fc.asyncProperty(anyLocal, async (local) => {
        const response = await evaluateEmail(`${local}@example.com`);
        if (response.statusCode !== 200) return expectRefused(response, 'email');
        expectEvaluation(response);
        expect(Buffer.byteLength(local, 'utf8')).toBeLessThanOrEqual(64);
        expect(local).not.toMatch(/["\\()[\],:;<>\s]|^\.|\.\.|\.$/);
      }),
      fuzzOptions(500),
    );
  });

  it.each([
    ['user@bücher.de', 'xn--bcher-kva.de'],
    ['用户@例子.广告', 'xn--fsqu00a.xn--4rr70v'],
    ['user@пример.рф', 'xn--e1afmkfd.xn--p1ai'],
    // UTS #46 non-transitional, as browsers: ß is kept, not folded to ss.
    ['user@Straße.de', 'xn--strae-oqa.de'],
    ['😀@😀.com', 'xn--e28h.com'],
    ['מִשְׁתַּמֵּשׁ@דוגמה.com', 'xn--6dbbec0c.com'],
  ])('%s: accepted, domain %s', async (address, expected) => {
    expect(expectEvaluation(await evaluateEmail(address)).email.domain).toBe(expected);
  });

  it.each([
    ['NUL in the domain', 'user@exa\u0000mple.com'],
    ['NUL in the local part', 'us\u0000er@example.com'],
    ['a lone surrogate in the domain', 'user@\ud800.com'],
    ['an RTL override in the domain', 'user@\u202eexample.com'],
    ['a space in the domain', 'user@exam ple.com'],
    ['two @', 'a@b@example.com'],
    ['no @', 'user.example.com'],
    ['an IP literal', 'user@[127.0.0.1]'],
    ['a numeric top-level label', 'user@1.2.3.4'],
    ['a label over 63 characters', `user@${'a'.repeat(64)}.com`],
    ['255 characters', `${'a'.repeat(64)}@${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(59)}.com`],
    ['a local part of 65 characters', `${'a'.repeat(65)}@example.com`],
    ['a local part of 33 characters and 66 octets', `${'ü'.repeat(33)}@example.com`],
    ['a comment', '(comment)user@example.com'],
    ['a quoted local part', '"user"@example.com'],
    ['an empty string', ''],
  ])('%s: refused, naming email', async (_name, address) => {
    expectRefused(await evaluateEmail(address), 'email');
  });

  it('numbers, arrays, objects, null and booleans as email: refused, naming email', async () => {
    await fc.assert(
      fc.asyncProperty(fc.jsonValue({ maxDepth: 2 }).filter((v) => typeof v !== 'string'), async (value) => {
        expectRefused(await evaluateEmail(value), 'email', value);
      }),
      fuzzOptions(200),
    );
  });

  it('is healthy afterwards', async () => {
    expectContract(await evaluateEmail('jane@example.com'));
    await expectHealthy(t);
  });
});
