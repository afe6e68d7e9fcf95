import { userInfo } from 'node:os';

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
