import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadAsnCsv } from '../../src/ip/asn-csv.js';
import { keyOf } from '../../src/ip/numeric.js';
import { ip, tempDir } from './fixtures.js';

let dir: string;
let cleanup: () => Promise<void>;
beforeEach(async () => {
  ({ dir, cleanup } = await tempDir());
});
afterEach(() => cleanup());

async function load(v4: string, v6: string) {
  await writeFile(join(dir, 'v4.csv'), v4);
  await writeFile(join(dir, 'v6.csv'), v6);
  return loadAsnCsv({ ipv4Num: join(dir, 'v4.csv'), ipv6: join(dir, 'v6.csv') });
}

describe('the open ASN CSV', () => {
  it('reads numeric IPv4 rows, quoted organisations, CRLF line ends and UTF-8 names', async () => {
    const table = await load(
      [
        '16777216,16777471,13335,"Cloudflare, Inc."',
        '16778240,16779263,38803,Gtelecom Pty Ltd\r',
        '16781312,16781567,64500,"Quote ""Q"" Ltd"',
        '16781568,16781823,64501,Société Générale',
        '16781824,16781900,64502',
      ].join('\n'),
      '',
    );
    expect(table.malformed).toBe(0);
    expect(table.lookup(keyOf(ip('1.0.0.1')))).toEqual({ asn: 13335, organization: 'Cloudflare, Inc.' });
    expect(table.lookup(keyOf(ip('1.0.7.255')))).toEqual({ asn: 38803, organization: 'Gtelecom Pty Ltd' });
    expect(table.lookup(keyOf(ip('1.0.16.1')))).toEqual({ asn: 64500, organization: 'Quote "Q" Ltd' });
    expect(table.lookup(keyOf(ip('1.0.17.1')))).toEqual({ asn: 64501, organization: 'Société Générale' });
    expect(table.lookup(keyOf(ip('1.0.18.1')))).toEqual({ asn: 64502, organization: null });
    expect(table.lookup(keyOf(ip('1.0.8.0')))).toBeNull();
  });

  it('reads IPv6 rows in every spelling and counts what is not an address', async () => {
    const table = await load('', [
      '2001:200::,2001:200:ffff:ffff:ffff:ffff:ffff:ffff,2500,WIDE Project',
      '2A02:C7F::,2A02:C7F:FFFF:FFFF:FFFF:FFFF:FFFF:FFFF,5607,Sky',
      '::ffff:0:0,::ffff:ffff:ffff,64496,Mapped',
      '64:ff9b::1.2.3.0,64:ff9b::1.2.3.255,64497,Dotted tail',
      '1:2:3:4:5:6:7:8:9,1:2:3:4:5:6:7:8:9,1,too many groups',
      ':1::,:1::,1,lone colon',
      '1::2::3,1::2::3,1,two gaps',
      'gggg::,gggg::,1,not hex',
      '12345::,12345::,1,group too long',
      '1:2:3:4:5:6:7,1:2:3:4:5:6:7,1,too few groups',
      '1:,1:,1,trailing colon',
      '2001:200::,2001:200::ff,2501,overlaps WIDE',
    ].join('\n'));
    expect(table.malformed).toBe(7);
    expect(table.overlapping).toBe(1);
    expect(table.entries).toBe(4);
    expect(table.lookup(keyOf(ip('2001:200:1::1')))).toEqual({ asn: 2500, organization: 'WIDE Project' });
    expect(table.lookup(keyOf(ip('2a02:c7f:1::1')))?.asn).toBe(5607);
    expect(table.lookup(keyOf({ address: '64:ff9b::102:380', version: 6 }))?.asn).toBe(64497);
    expect(table.lookup(keyOf({ address: '::ffff:1:2', version: 6 }))?.asn).toBe(64496);
  });

  it('keeps, of two overlapping rows, the earlier one where they overlap and the later one beyond: deterministic, and counted apart', async () => {
    // The one overlap in the bundled data: 214.95.0.0-215.0.255.255 (AS749), then 215.0.0.0-215.1.3.255 (AS721).
    const table = await load(['3596550144,3607166975,749,DoD', '3607101440,3607167999,721,DoD NIC'].join('\n'), '');
    expect({ malformed: table.malformed, overlapping: table.overlapping, entries: table.entries }).toEqual({ malformed: 0, overlapping: 1, entries: 2 });
    expect(table.lookup(keyOf(ip('215.0.0.1')))?.asn).toBe(749);
    expect(table.lookup(keyOf(ip('215.1.2.3')))?.asn).toBe(721);
  });

  it('counts IPv4 rows out of range or reversed', async () => {
    const table = await load(['0,4294967296,1,too big', '200,100,1,reversed', 'x,1,1,not a number', '1,2,0,no ASN', '1,2', '10,20,7,ok'].join('\n'), '');
    expect(table.malformed).toBe(5);
    expect(table.entries).toBe(1);
  });
});
