import { Reader } from 'maxmind';
import { describe, expect, it } from 'vitest';
import { anonymousIpRecord, asnRecord, cityRecord, writeMmdb } from './mmdb.js';

describe('test MaxMind DB writer', () => {
  const london = cityRecord({
    countryCode: 'GB', country: 'United Kingdom', city: 'London', region: { code: 'ENG', name: 'England' },
    postalCode: 'EC1A', latitude: 51.5142, longitude: -0.0931, accuracyRadius: 20, timeZone: 'Europe/London',
  });

  for (const recordSize of [24, 28, 32] as const) {
    for (const ipVersion of [4, 6] as const) {
      it(`writes a tree maxmind reads back (record size ${recordSize}, IPv${ipVersion})`, () => {
        const networks = [
          { network: '81.2.69.0/24', data: london },
          { network: '81.2.69.128/25', data: asnRecord(64500, 'Carved Out') },
          { network: '203.0.113.7/32', data: { n: -5, big: 4_000_000_000, list: [1, 2.5, true, 'x'.repeat(300)] } },
          ...(ipVersion === 6 ? [{ network: '2a02:c7f::/32', data: anonymousIpRecord({ vpn: true }) }] : []),
        ];
        const reader = new Reader(writeMmdb({ databaseType: 'GeoLite2-City', ipVersion, networks, recordSize }));
        expect(reader.metadata).toMatchObject({ databaseType: 'GeoLite2-City', ipVersion, recordSize, binaryFormatMajorVersion: 2 });
        expect(reader.get('81.2.69.1')).toEqual({
          continent: { code: 'EU', geoname_id: 6255148, names: { en: 'Europe' } },
          country: { geoname_id: 1071, iso_code: 'GB', names: { en: 'United Kingdom' } },
          registered_country: { geoname_id: 1071, iso_code: 'GB', names: { en: 'United Kingdom' } },
          city: { geoname_id: 2643743, names: { en: 'London' } },
          location: { accuracy_radius: 20, latitude: 51.5142, longitude: -0.0931, time_zone: 'Europe/London' },
          postal: { code: 'EC1A' },
          subdivisions: [{ geoname_id: 6269131, iso_code: 'ENG', names: { en: 'England' } }],
        });
        expect(reader.get('81.2.69.200')).toEqual({ autonomous_system_number: 64500, autonomous_system_organization: 'Carved Out' });
        expect(reader.get('203.0.113.7')).toEqual({ n: -5, big: 4_000_000_000, list: [1, 2.5, true, 'x'.repeat(300)] });
        expect(reader.get('203.0.113.8')).toBeNull();
        // The /25 carved out of the /24 leaves 81.2.69.0/25 holding the city record.
        expect(reader.getWithPrefixLength('81.2.69.1')[1]).toBe(25);
        if (ipVersion === 6) expect(reader.get('2a02:c7f:1::1')).toEqual({ is_anonymous: true, is_anonymous_vpn: true });
      });
    }
  }

  it('refuses an IPv6 network in an IPv4 tree', () => {
    expect(() => writeMmdb({ databaseType: 'x', ipVersion: 4, networks: [{ network: '2001:db8::/32', data: 'x' }] })).toThrow(/IPv6/);
  });
});
