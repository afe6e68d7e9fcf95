import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FIELD_PATHS } from '../../src/rules/fields.js';
import { ruleFileSchemaJson } from '../../src/rules/json-schema.js';
import { LIBRARY_IDS } from '../../src/rules/library.js';

describe('rules/schema.json', () => {
  it('is what `npm run rules:schema` generates from the loader\'s schema', () => {
    expect(readFileSync('rules/schema.json', 'utf8'), 'run `npm run rules:schema` and commit rules/schema.json').toBe(ruleFileSchemaJson());
  });

  it('tells editors the field names and library ids', () => {
    const schema = JSON.parse(ruleFileSchemaJson()) as { definitions: Record<string, { properties: Record<string, { enum?: string[] }> }> };
    expect(schema.definitions.condition?.properties.field?.enum).toEqual(FIELD_PATHS);
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
