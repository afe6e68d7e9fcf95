/**
 * Writes src/history/country-extents.ts: for each ISO 3166-1 country code an IP database can
 * return, a centre and the radius of a circle on the sphere that holds all of the country's land.
 * Impossible travel uses it when only the country of an address is known, so a coarse position
 * never makes anyone seem farther than they may be.
 *
 * Source: the border data of @rapideditor/country-coder (ISC licence). A code's land is its own
 * feature, or, for a country drawn as parts (the United States, France…), those parts that have no
 * official ISO code of their own: an IP in Puerto Rico or Réunion is located as PR or RE, never
 * as US or FR, while the Canary Islands (IC, an exceptionally reserved code) are ES.
 *
 *   npx tsx scripts/country-extents.ts     (a test fails when the committed table is stale)
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { countryExtentsSource } from '../test/support/country-extents.js';

const target = fileURLToPath(new URL('../src/history/country-extents.ts', import.meta.url));
writeFileSync(target, countryExtentsSource());
console.log(`wrote ${target}`);
