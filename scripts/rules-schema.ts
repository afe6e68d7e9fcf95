import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ruleFileSchemaJson } from '../src/rules/json-schema.js';

/** Writes rules/schema.json, the JSON Schema editors use to validate rule files as people type. */
const target = fileURLToPath(new URL('../rules/schema.json', import.meta.url));
writeFileSync(target, ruleFileSchemaJson());
console.log(`wrote ${target}`);
