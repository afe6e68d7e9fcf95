import { z } from 'zod';
import { problems } from '../../http/problem.js';
import { adminRoute } from '../route.js';
import { hashRecoveryCode, matchingStep, newRecoveryCodes, newTotpSecret, otpauthUri, qrDataUrl, RECOVERY_CODES, TOTP_DIGITS, TOTP_STEP_SECONDS } from '../totp.js';

/**
 * TOTP two-factor for console users (README "Two-factor authentication"). A user enrols themselves:
 * `POST /session/totp` makes a secret and answers it with its `otpauth://` URI and a QR code drawn
 * by the service; `PUT /session/totp` with a code from the app confirms it and answers ten recovery
 * codes, once (the store keeps their SHA-256). From then on logging in needs a code or a recovery
 * code besides the password (src/admin/routes/session.ts). Only an instance owner removes a
 * confirmed factor (`DELETE /users/{id}/totp`), which ends the user's sessions: a user who lost
 * their phone asks an owner, and a stolen session cannot turn two-factor off. All three audited.
 */
const enrolment = z.object({
  secret: z.string().describe('Base32, for typing into an authenticator app'),
  otpauth_uri: z.string().describe('The `otpauth://totp/…` URI the QR code holds'),
  qr_code: z.string().describe('The QR code as an SVG `data:` URL'),
  digits: z.number().int(),
  period_seconds: z.number().int(),
});

const totpCode = z.string().trim().regex(/^\d{6}$/, `must be the ${TOTP_DIGITS} digits the authenticator app shows`);

export const startTotp = adminRoute({
  method: 'POST', url: '/session/totp', tag: 'session', operationId: 'startTotp',
  summary: 'Start enrolling a TOTP authenticator: a new secret, its URI and QR code',
  description: 'Replaces an enrolment not yet confirmed. A confirmed authenticator is removed only by an instance owner (409 here).',
  access: { role: 'signed-in' },
  accessOptions: { sessionOnly: true, duringPasswordChange: true },
  success: {
    status: 201, description: 'Scan the QR code (or type the secret), then confirm with a code', schema: enrolment,
    example: { secret: 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP', otpauth_uri: 'otpauth://totp/Risk%20console%3Aops%40example.com?secret=JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP&issuer=Risk%20console&algorithm=SHA1&digits=6&period=30', qr_code: 'data:image/svg+xml;base64,PHN2Zy…', digits: 6, period_seconds: 30 },
  },
  problems: { 409: 'An authenticator is already confirmed: an instance owner must reset it first' },
  handler: async ({ principal, services, now }) => {
    const secret = newTotpSecret();
    if (!(await services.store.secondFactors.startTotp(principal.id, secret, now))) throw problems.conflict('two-factor is already set up; an instance owner can reset it');
    const uri = otpauthUri(secret, principal.email!);
    return { secret, otpauth_uri: uri, qr_code: await qrDataUrl(uri), digits: TOTP_DIGITS, period_seconds: TOTP_STEP_SECONDS };
  },
});

export const confirmTotp = adminRoute({
  method: 'PUT', url: '/session/totp', tag: 'session', operationId: 'confirmTotp',
  summary: 'Confirm the authenticator with a code it shows; answers the recovery codes, once',
  access: { role: 'signed-in' },
  accessOptions: { sessionOnly: true, duringPasswordChange: true },
  body: z.object({ code: totpCode }),
  example: { code: '492039' },
  success: {
    status: 200, description: `Two-factor is on; ${RECOVERY_CODES} recovery codes, each good once, shown only now`,
    schema: z.object({ recovery_codes: z.array(z.string()) }), example: { recovery_codes: ['k3vq-7m2d-ax9p-4rtw'] },
  },
  problems: { 409: 'No enrolment started, or it is confirmed already' },
  handler: async ({ body, principal, services, now }) => {
    const factor = await services.store.secondFactors.totp(principal.id);
    if (!factor || factor.confirmed_at !== null) throw problems.conflict('no enrolment to confirm: start one with POST /admin/v1/session/totp');
    const step = matchingStep(factor.secret, body.code, now);
    if (step === undefined) throw problems.invalidRequest([{ path: 'code', message: 'does not match: check the phone\'s clock and type the code now shown' }]);
    const codes = newRecoveryCodes();
    if (!(await services.store.secondFactors.confirmTotp(principal.id, step, codes.map(hashRecoveryCode), now))) throw problems.conflict('the enrolment changed meanwhile; start again');
    return { recovery_codes: codes };
  },
});

export const resetTotp = adminRoute({
  method: 'DELETE', url: '/users/:user_id/totp', tag: 'users', operationId: 'resetTotp',
  summary: 'Remove a user\'s authenticator and recovery codes (they enrol again); ends their sessions',
  access: { role: 'owner' },
  accessOptions: { sessionOnly: true },
  params: z.object({ user_id: z.string().regex(/^usr_[0-9a-f]{16}$/) }),
  success: { status: 204, description: 'Removed' },
  problems: { 404: 'No such user, or no authenticator' },
  handler: async ({ params, principal, services, now }) => {
    if (!(await services.store.secondFactors.reset(params.user_id, principal.actor, now))) throw problems.resourceNotFound(`no authenticator for user ${params.user_id}`);
  },
});

export const twoFactorRoutes = [startTotp, confirmTotp, resetTotp];
