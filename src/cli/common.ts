import { userInfo } from 'node:os';

/** What the command lines (`npm run keys`, `npm run rules`) share: usage errors, who acts, how they run. */

/** A mistake in the command itself: the usage is printed, the exit code is 2. */
export class UsageError extends Error {}

export function fail(message: string): never {
  throw new UsageError(message);
}

/**
 * Who the audit log names for a change made from a command line: `cli:<user>` (the operating
 * system's user; a container without a passwd entry for it says `cli`).
 */
export function cliActor(): string {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return 'cli';
  }
}

type Run = (argv: string[], out: (line: string) => void, err: (line: string) => void) => Promise<number>;

/**
 * Runs `run` with the process's arguments when `moduleUrl` is the script node was started with
 * (tests import the module and call `run` themselves). Exit 0 or `run`'s code; 2 for a usage
 * error; 1, with the message and no stack, for anything the store or a file refused.
 */
export function runIfMain(moduleUrl: string, run: Run): void {
  const script = process.argv[1];
  if (script === undefined || !moduleUrl.endsWith(script.replace(/\\/g, '/').split('/').pop()!)) return;
  run(process.argv.slice(2), (l) => process.stdout.write(`${l}\n`), (l) => process.stderr.write(`${l}\n`)).then(
    (code) => process.exit(code),
    (error: Error) => {
      process.stderr.write(`${error instanceof UsageError ? '' : 'error: '}${error.message}\n`);
      process.exit(error instanceof UsageError ? 2 : 1);
    },
  );
}
