import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { version } from '../src/app.js';
import { buildOpenApiDocument } from '../src/http/openapi.js';

describe('the committed OpenAPI document', () => {
  it('is what the schemas generate (run `npm run openapi` after changing them)', () => {
    const committed = JSON.parse(readFileSync('docs/openapi.json', 'utf8'));
    expect(committed).toEqual(JSON.parse(JSON.stringify(buildOpenApiDocument(version))));
  });
});
