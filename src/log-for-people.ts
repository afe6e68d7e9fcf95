import type { DestinationStream } from 'pino';

/**
 * A development start's log, for a person at a terminal: each JSON line pino writes becomes one
 * readable line, `20:51:07 WARN  message  key=value …`. Production and test starts keep the JSON
 * lines (src/server.ts chooses). Nothing is dropped: a field that is an object is written as JSON.
 */
const LEVELS: Record<string, string> = { trace: 'TRACE', debug: 'DEBUG', info: 'INFO ', warn: 'WARN ', error: 'ERROR', fatal: 'FATAL' };
const LEFT_OUT = new Set(['level', 'time', 'msg', 'service', 'pid', 'hostname']);

export function formatForPeople(line: string): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line;
  }
  const time = typeof record.time === 'string' ? record.time.slice(11, 19) : '';
  const fields = Object.entries(record)
    .filter(([key, value]) => !LEFT_OUT.has(key) && value !== undefined)
    .map(([key, value]) => `${key}=${typeof value === 'string' ? value : JSON.stringify(value)}`);
  return `${[time, LEVELS[String(record.level)] ?? String(record.level), String(record.msg ?? ''), ...fields].filter((part) => part !== '').join('  ')}\n`;
}

export function forPeople(out: NodeJS.WritableStream = process.stdout): DestinationStream {
  return { write: (chunk: string) => void out.write(chunk.split('\n').filter((line) => line !== '').map(formatForPeople).join('')) };
}
