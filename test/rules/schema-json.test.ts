import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { FIELD_PATHS } from '../../src/rules/fields.js';
import { ruleFileSchemaJson } from '../../src/rules/json-schema.js';
import { LIBRARY_IDS } from '../../src/rules/library.js';

describe('rules/schema.json', () => {
  it('is what `npm run rules:schema` generates from the loader\'s schema', () => {
    expect(readFileSync('rules/schema.json', 'utf8'), 'run `npm run rules:schema` and commit rules/schema.json').toBe(ruleFileSchemaJson());
  });

  it('tells editors the field names and library ids', () => {
    const schema = JSON.parse(ruleFileSchemaJson()) as { definitions: Record<string, { properties: Record<string, { enum?: string[]; anyOf?: Array<{ enum?: string[]; pattern?: string }> }> }> };
    // The fixed fields, or a velocity counter of the file (velocity.<name>).
    expect(schema.definitions.condition?.properties.field?.anyOf?.[0]?.enum).toEqual(FIELD_PATHS);
    expect(schema.definitions.condition?.properties.field?.anyOf?.[1]?.pattern).toBe('^velocity\\.([a-z][a-z0-9_]{0,63})$');
    expect(schema.definitions.rule?.properties.library?.enum).toEqual(LIBRARY_IDS);
  });

  it('is referenced by every shipped rule file, so editors validate as people type', () => {
    const files = readdirSync('rules').filter((f) => f.endsWith('.yaml'));
    expect(files).toHaveLength(4);
    for (const file of files) {
      expect(readFileSync(`rules/${file}`, 'utf8').split('\n')[0], file).toBe('# yaml-language-server: $schema=./schema.json');
    }
  });
});

describe('rules/schema.json, read by a JSON Schema validator as an editor would', () => {
  // allowUnionTypes: zod writes `type: [string, number, boolean]`, which draft-07 allows.
  const validate = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(JSON.parse(ruleFileSchemaJson()) as object);

  it('accepts the shipped rule files', () => {
    for (const file of readdirSync('rules').filter((f) => f.endsWith('.yaml'))) {
      expect(validate(parse(readFileSync(`rules/${file}`, 'utf8'))), `${file}: ${JSON.stringify(validate.errors)}`).toBe(true);
    }
  });

  it.each([
    ['an unknown field', { field: 'email.domian', equals: 'x' }],
    ['two operators', { field: 'ip.asn', equals: 1, in: [1] }],
    ['no operator', { field: 'ip.asn' }],
    ['a combinator with a field', { all: [{ field: 'ip.asn', equals: 1 }], field: 'ip.asn' }],
  ])('flags %s', (_name, when) => {
    expect(validate({ rules: [{ id: 'r', name: 'R', score: 1, when }] })).toBe(false);
  });

  it('flags a library rule with a condition, and a custom rule without a score', () => {
    expect(validate({ rules: [{ library: 'ip_tor', when: { field: 'ip.asn', equals: 1 } }] })).toBe(false);
    expect(validate({ rules: [{ id: 'r', name: 'R', when: { field: 'ip.asn', equals: 1 } }] })).toBe(false);
  });
});
