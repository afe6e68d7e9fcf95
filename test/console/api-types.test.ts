import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { version } from '../../src/app.js';
import { buildOpenApiDocument } from '../../src/openapi.js';
import { CONSOLE_API_TYPES, consoleApiTypes } from '../../scripts/console-api-types.js';

describe("the console's API types", () => {
  it('are what the OpenAPI document generates (run `npm run openapi` after changing a route)', async () => {
    expect(readFileSync(CONSOLE_API_TYPES, 'utf8')).toBe(await consoleApiTypes(buildOpenApiDocument(version)));
  });
});
