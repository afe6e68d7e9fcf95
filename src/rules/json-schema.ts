import { z } from 'zod';
import { ruleFileSchema } from './file-schema.js';

/** The rule file schema as JSON Schema text (committed as rules/schema.json; a test keeps it current). */
export function ruleFileSchemaJson(): string {
  // `input`: what people write, so fields with defaults (thresholds) are optional.
  return `${JSON.stringify(z.toJSONSchema(ruleFileSchema, { io: 'input', target: 'draft-07' }), null, 2)}\n`;
}
