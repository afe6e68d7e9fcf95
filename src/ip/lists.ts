import { FILE_CAPS } from '../files/caps.js';
import { readLines } from '../files/read.js';
import type { IpKey } from './numeric.js';
import { parseNetwork } from './numeric.js';
import { IpRangeTable } from './ranges.js';

/**
 * Plain address lists in `DATA_DIR`: one IP or CIDR per line, `#` starts a comment (whole line or
 * trailing). The Tor Project's bulk exit list (https://check.torproject.org/torbulkexitlist) is this
 * format; its richer `exit-addresses` format is read too (the address of each `ExitAddress` line).
 */
export interface AddressList {
  has(ip: IpKey): boolean;
  /** Valid lines read. */
  entries: number;
  /** Lines that are neither an address, a network, a comment nor blank. */
  malformed: number;
  /** A few malformed lines as `line N: text`, for the log. */
  malformedExamples: string[];
  /** File modification time: when the list was last written. */
  modified: Date;
}

export class ListError extends Error {}

const EXIT_ADDRESS = /^ExitAddress\s+(\S+)/;
const EXIT_ADDRESSES_OTHER = /^(ExitNode|Published|LastStatus)\s/;

export function parseAddressList(text: string): Omit<AddressList, 'modified'> {
  const reader = new AddressListReader();
  text.split('\n').forEach((line, i) => reader.line(line, i + 1));
  return reader.finish();
}

/** Takes a list one line at a time, so a file is parsed as it is read (readLines), never held whole. */
class AddressListReader {
  private readonly builder = IpRangeTable.builder<true>();
  private entries = 0;
  private malformed = 0;
  private readonly malformedExamples: string[] = [];

  line(raw: string, number: number): void {
    const hash = raw.indexOf('#');
    let line = (hash === -1 ? raw : raw.slice(0, hash)).trim();
    if (line === '' || EXIT_ADDRESSES_OTHER.test(line)) return;
    const exit = EXIT_ADDRESS.exec(line);
    if (exit) line = exit[1]!;
    const range = parseNetwork(line);
    if (range === null) {
      this.malformed++;
      if (this.malformedExamples.length < 3) this.malformedExamples.push(`line ${number}: ${JSON.stringify(raw.slice(0, 80))}`);
      return;
    }
    this.builder.add(range, true);
    this.entries++;
  }

  finish(): Omit<AddressList, 'modified'> {
    const table = this.builder.build('merge');
    return { has: (ip) => table.has(ip), entries: this.entries, malformed: this.malformed, malformedExamples: this.malformedExamples };
  }
}

/**
 * Reads and checks a list. Malformed lines are counted, not fatal; but a file where they outnumber
 * the valid ones is not a list (an HTML error page, a wrong file) and is refused. So is a list with
 * no address at all: an empty file is a failed download or a full disk far more often than a
 * deliberate "nothing is listed", and taking it would answer `false` for every address. To turn a
 * source off, remove its file.
 */
export async function loadAddressList(path: string): Promise<AddressList> {
  const reader = new AddressListReader();
  const { modified } = await readLines(path, FILE_CAPS.addressList, (line, number) => reader.line(line, number));
  const list = reader.finish();
  if (list.entries === 0 && list.malformed === 0) {
    throw new ListError('no addresses in the file (an empty list is refused; remove the file to turn the source off)');
  }
  if (list.malformed > list.entries) {
    throw new ListError(
      `${list.malformed} malformed line(s) against ${list.entries} valid: not an address list (${list.malformedExamples.join('; ')})`,
    );
  }
  return { ...list, modified };
}
