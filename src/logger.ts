import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Structured JSON logs. The request path never hands the logger a key, a password, a token, a
 * session cookie or an address (the evaluation line carries the e-mail's domain only, tested in
 * test/security/logs.test.ts and test/admin/logs.test.ts); redaction by path is the safety net for the names a secret would travel under. The paths are
 * exact, not wildcards: a `*.x` path made every log call walk the object and cost about 30 µs a
 * line, more than the whole evaluation.
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'risk-evaluation' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'authorization', 'headers.authorization', 'req.headers.authorization', 'email', 'body.email', 'key',
          // The admin API's secrets: passwords, tokens, the session cookie and its CSRF token.
          'password', 'body.password', 'current_password', 'new_password', 'token', 'body.token',
          'cookie', 'headers.cookie', 'req.headers.cookie', 'csrf_token', 'headers["x-csrf-token"]', 'req.headers["x-csrf-token"]',
        ],
        censor: '[redacted]',
      },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
