import { writeFileSync } from 'node:fs';
import { version } from '../src/app.js';
import { buildOpenApiDocument } from '../src/http/openapi.js';

/** Writes docs/openapi.json from the zod schemas (`npm run openapi`). A test fails when it is stale. */
writeFileSync(new URL('../docs/openapi.json', import.meta.url), `${JSON.stringify(buildOpenApiDocument(version), null, 2)}\n`);
