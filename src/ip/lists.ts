import { FILE_CAPS } from '../files/caps.js';
import { readLines } from '../files/read.js';
import { inWorker, type Moved } from '../files/worker.js';
import type { IpKey } from './numeric.js';
import { parseNetwork } from './numeric.js';
import { buffersOf, IpRangeTable, type IpRangeTableParts } from './ranges.js';

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

/** A list held in memory, parsed and built at once: for the data job, which serves no requests. */
export function parseAddressList(text: string): Omit<AddressList, 'modified'> {
  const reader = new AddressListReader();
  text.split('\n').forEach((line, i) => reader.line(line, i + 1));
  return reader.list(reader.table());
}

/** Takes a list one line at a time, so a file is parsed as it is read (readLines), never held whole. */
class AddressListReader {
  private readonly builder = IpRangeTable.builder<true>();
  entries = 0;
  malformed = 0;
  readonly malformedExamples: string[] = [];

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

  table(): IpRangeTable<true> {
    return this.builder.build('merge');
  }

  list(table: IpRangeTable<true>): Omit<AddressList, 'modified'> {
    return { has: (ip) => table.has(ip), entries: this.entries, malformed: this.malformed, malformedExamples: this.malformedExamples };
  }
}

/**
 * Reads and checks a list. Malformed lines are counted, not fatal; but a file where they outnumber
 * the valid ones is not a list (an HTML error page, a wrong file) and is refused. So is a list with
 * no address at all: an empty file is a failed download or a full disk far more often than a
 * deliberate "nothing is listed", and taking it would answer `false` for every address. To turn a
 * source off, remove its file. All of it runs in a worker thread (src/files/worker.ts): a list at
 * its cap is half a second of work the event loop does not wait for.
 */
export async function loadAddressList(path: string, signal?: AbortSignal): Promise<AddressList> {
  const built = await inWorker<BuiltAddressList>(import.meta.url, buildAddressList.name, [path], { signal });
  const table = IpRangeTable.fromParts(built.table);
  return { has: (ip) => table.has(ip), entries: built.entries, malformed: built.malformed, malformedExamples: built.malformedExamples, modified: built.modified };
}

interface BuiltAddressList extends Omit<AddressList, 'has'> {
  table: IpRangeTableParts<true>;
}

/** The worker's half of `loadAddressList`: its table's arrays are moved back, not copied. */
export async function buildAddressList(path: string): Promise<Moved<BuiltAddressList>> {
  const reader = new AddressListReader();
  const { modified } = await readLines(path, FILE_CAPS.addressList, (line, number) => reader.line(line, number));
  const { entries, malformed, malformedExamples } = reader;
  if (entries === 0 && malformed === 0) {
    throw new ListError('no addresses in the file (an empty list is refused; remove the file to turn the source off)');
  }
  if (malformed > entries) {
    throw new ListError(`${malformed} malformed line(s) against ${entries} valid: not an address list (${malformedExamples.join('; ')})`);
  }
  const table = reader.table().parts();
  return { value: { table, entries, malformed, malformedExamples, modified }, transfer: buffersOf(table) };
}
