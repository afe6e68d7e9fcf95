import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bearer, evaluationBody, KEY_A, startTestApp, type TestApp } from '../support/app.js';
import { cityDatabase, cityRecord } from '../support/mmdb.js';

// The IP step through the real app: what a client sees when a data file lies.

let t: TestApp | undefined;
afterEach(async () => {
  await t?.app.close();
  t = undefined;
});

function directory(prefix: string, files: Record<string, string | Buffer>): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  return dir;
}

const evaluate = (body: object) => t!.app.inject({ method: 'POST', url: '/v1/risk/evaluate', headers: bearer(KEY_A), payload: body });

describe('a City database with a number where a name belongs', () => {
  it('answers 200 with the name unknown: a rule on it does not fire, and nothing throws', async () => {
    const rules = `
rules:
  - id: london_suffix
    name: City name ends in "on"
    score: 30
    when: { field: ip.city, ends_with: "on" }
  - id: country_gb
    name: Country is GB
    score: 10
    when: { field: ip.country_code, equals: GB }
`;
    t = await startTestApp({
      RULES_DIR: directory('risk-rules-', { 'signup.yaml': rules }),
      DATA_DIR: directory('risk-data-', {
        'GeoLite2-City.mmdb': cityDatabase(6, [
          { network: '81.2.69.0/24', data: { country: { iso_code: 'GB', names: { en: 'United Kingdom' } }, city: { names: { en: 42 } } } },
          { network: '81.2.70.0/24', data: cityRecord({ countryCode: 'GB', country: 'United Kingdom', city: 'London' }) },
        ]),
      }),
    });
    const lying = await evaluate(evaluationBody({ event_type: 'signup', ip: '81.2.69.160' }));
    expect(lying.statusCode).toBe(200);
    const body = lying.json();
    expect(body.ip).toMatchObject({ country_code: 'GB', city: null });
    expect(body.unavailable).toEqual(expect.arrayContaining(['ip.geo', 'rule:london_suffix', 'rule:country_gb']));
    expect(body.score.details).toEqual([]);

    // The good record beside it still scores.
    const good = (await evaluate(evaluationBody({ event_type: 'signup', ip: '81.2.70.1' }))).json();
    expect(good.score.details.map((d: { rule_name: string }) => d.rule_name)).toEqual(['City name ends in "on"', 'Country is GB']);
    expect(t.logs.lines.filter((l) => l.msg === 'ip data of the wrong type in ip.maxmind.city: the value is unknown, its check unavailable')).toHaveLength(1);
  });
});
