import pino, { type DestinationStream, type Logger } from 'pino';

/**
 * Structured JSON logs. Secrets and personal data are redacted by path: the Authorization header
 * wherever it appears, and e-mail addresses (the request log line carries only the domain).
 */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'risk-evaluation' },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: {
        paths: [
          'authorization',
          '*.authorization',
          'headers.authorization',
          '*.headers.authorization',
          'email',
          '*.email',
          'body.email',
          'key',
          '*.key',
        ],
        censor: '[redacted]',
      },
      formatters: { level: (label) => ({ level: label }) },
    },
    destination,
  );
}
