import { gunzipSync } from 'node:zlib';

/**
 * The one file of a `.tar.gz` whose name ends with `suffix` (MaxMind ships each database as
 * `GeoLite2-City_YYYYMMDD/GeoLite2-City.mmdb` in a tarball). POSIX ustar headers: 512-byte blocks,
 * name at 0, size in octal at 124, type at 156, name prefix at 345.
 */
export function extractFromTarGz(archive: Buffer, suffix: string): Buffer {
  const tar = gunzipSync(archive);
  let at = 0;
  while (at + 512 <= tar.length) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const field = (start: number, length: number) => header.subarray(start, start + length).toString('utf8').replace(/\0.*$/s, '');
    const name = [field(345, 155), field(0, 100)].filter((p) => p !== '').join('/');
    const size = parseInt(field(124, 12).trim() || '0', 8);
    const type = field(156, 1);
    if (!Number.isFinite(size) || size < 0) throw new Error(`bad tar header for ${name}`);
    const body = at + 512;
    if ((type === '0' || type === '') && name.endsWith(suffix)) {
      if (body + size > tar.length) throw new Error(`tar entry ${name} is truncated`);
      return tar.subarray(body, body + size);
    }
    at = body + Math.ceil(size / 512) * 512;
  }
  throw new Error(`no file ending in ${suffix} in the archive`);
}
