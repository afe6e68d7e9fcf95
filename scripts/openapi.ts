import { writeFileSync } from 'node:fs';
import { version } from '../src/app.js';
import { buildOpenApiDocument } from '../src/openapi.js';
import { CONSOLE_API_TYPES, consoleApiTypes } from './console-api-types.js';

/**
 * Writes docs/openapi.json from the zod schemas (`npm run openapi`), and the console's API client
 * types from it. A test fails when either is stale.
 */
const document = buildOpenApiDocument(version);
writeFileSync(new URL('../docs/openapi.json', import.meta.url), `${JSON.stringify(document, null, 2)}\n`);
writeFileSync(CONSOLE_API_TYPES, await consoleApiTypes(document));
