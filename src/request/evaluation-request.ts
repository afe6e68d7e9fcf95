import { z } from 'zod';
import { MAX_EMAIL_LENGTH, parseEmail, type ParsedEmail } from '../email/address.js';
import { parseIp, type ParsedIp } from '../ip/address.js';

/**
 * The evaluation request (spec §2.1, PRODUCT.md "Endpoint"), written once: it validates the body,
 * types the handler and feeds the OpenAPI document.
 */

const text = (max: number) => z.string().max(max);

export const userSchema = z
  .object({
    user_id: text(256).optional(),
    first_name: text(256).optional(),
    last_name: text(256).optional(),
  })
  .meta({ description: 'The user, as the caller knows them. Every field is optional.' });

/** Length of `device_hash` and `browser_hash`: a SHA-256 digest in hexadecimal, as the device SDK sends. */
export const DEVICE_DIGEST_LENGTH = 64;
/** Longest `device_os`, `device_model`, `browser_name` and `browser_version` (the SDK cuts to this). */
export const MAX_DEVICE_TEXT = 128;

const digest = (description: string) =>
  z
    .string()
    .regex(new RegExp(`^[0-9a-f]{${DEVICE_DIGEST_LENGTH}}$`), `must be ${DEVICE_DIGEST_LENGTH} lower-case hexadecimal characters (a SHA-256 digest)`)
    .optional()
    .meta({ description, example: '50d858e0985ecc7f60418aaf0cc5ab587f42c2570a884095a9e8ccacd0f6545c' });
const deviceText = (description: string, example: string) => text(MAX_DEVICE_TEXT).optional().meta({ description, example });

export const deviceIntelligenceSchema = z
  .object({
    device_hash: digest('SHA-256 of signals that stay the same across browsers on one device (screen, hardware, platform, time zone, GPU).'),
    device_os: deviceText('Operating system and version.', 'Windows 11'),
    device_model: deviceText('Device model, where the browser tells it (Android, iPhone).', 'Pixel 8'),
    browser_hash: digest('SHA-256 of the device signals plus those of this browser (canvas, audio, fonts, languages, user agent).'),
    browser_name: deviceText('Browser name.', 'Chrome'),
    browser_version: deviceText('Browser version.', '131.0.6778.86'),
    cookie_enabled: z.boolean().optional().meta({ description: 'Whether the browser accepts cookies.' }),
  })
  .meta({ description: 'Collected by the device intelligence SDK (`/sdk/v1/device.js`). Every field is optional.' });

export const evaluationRequestSchema = z
  .object({
    ip: z.string().max(64).meta({ description: 'IPv4 or IPv6 address of the user; IPv4-mapped IPv6 is read as IPv4.', example: '81.2.69.160' }),
    email: z.string().max(MAX_EMAIL_LENGTH).meta({ description: 'E-mail address of the user; the domain may be internationalised.', example: 'jane.doe@example.com' }),
    event_type: z.string().min(1).max(64).meta({ description: 'An event type that has a rule set, e.g. `account_register`.', example: 'account_register' }),
    user: userSchema.optional(),
    device_intelligence: deviceIntelligenceSchema.optional(),
  })
  // Unknown top-level fields are ignored (PRODUCT.md), so clients can send more than we read.
  .strip();

export type EvaluationRequestBody = z.infer<typeof evaluationRequestSchema>;

/** The body after validation: addresses parsed once, here, for every step after. */
export interface EvaluationRequest extends EvaluationRequestBody {
  parsedIp: ParsedIp;
  parsedEmail: ParsedEmail;
}

export interface FieldError {
  path: string;
  message: string;
}

/** Validates a body; every failing field is named with a JSON-pointer-like dotted path. */
export function validateEvaluationRequest(body: unknown): { ok: true; value: EvaluationRequest } | { ok: false; errors: FieldError[] } {
  const parsed = evaluationRequestSchema.safeParse(body);
  if (parsed.success) {
    const { data } = parsed;
    const parsedIp = parseIp(data.ip);
    const parsedEmail = parseEmail(data.email);
    if (!('error' in parsedIp) && !('error' in parsedEmail)) {
      // Every key, always, in one order: one object shape for everything downstream to read.
      const value: EvaluationRequest = {
        ip: data.ip,
        email: data.email,
        event_type: data.event_type,
        user: data.user,
        device_intelligence: data.device_intelligence,
        parsedIp,
        parsedEmail,
      };
      return { ok: true, value };
    }
  }
  return { ok: false, errors: fieldErrors(body, parsed.error?.issues ?? []) };
}

/** Every bad field of a body zod or the address parsers refused, the first problem of each. */
function fieldErrors(body: unknown, issues: readonly z.core.$ZodIssue[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const issue of issues) {
    const path = issue.path.length > 0 ? issue.path.map(String).join('.') : '(body)';
    // One error per field, the first: zod 4 runs `.max()` on any value with a `length` after the
    // type check failed, so `{"email": {"length": 300}}` would also get "Too big: expected unknown".
    if (!errors.some((e) => e.path === path)) errors.push({ path, message: issue.message });
  }
  // Addresses are checked even when another field failed, so one round trip names every bad field.
  const fields = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
  const ip = typeof fields.ip === 'string' ? parseIp(fields.ip) : null;
  if (ip && 'error' in ip && !errors.some((e) => e.path === 'ip')) errors.push({ path: 'ip', message: ip.error });
  const email = typeof fields.email === 'string' ? parseEmail(fields.email) : null;
  if (email && 'error' in email && !errors.some((e) => e.path === 'email')) errors.push({ path: 'email', message: email.error });
  return errors;
}
