import { z } from 'zod';

/** Schemas of what rules decided and why: shared by decisions and a rule set's dry run. */
export const scoreDetail = z.object({ rule_id: z.string(), rule_name: z.string(), rule_type: z.literal('static'), score: z.number() });

export const evidence = z.object({
  field: z.string().meta({ description: 'The field read (see the field catalogue)' }),
  value: z.union([z.string(), z.number(), z.boolean()]).nullable().meta({ description: 'What it held; null when unknown or absent' }),
  reading: z.enum(['value', 'unknown', 'absent']).meta({ description: '`unknown`: the check could not run, or the value was null or of the wrong type; `absent`: not sent (a known answer)' }),
  unavailable: z.string().nullable().meta({ description: 'For an unknown reading: the check that could not run (`ip.tor`)' }),
  condition: z.string().nullable().optional().meta({ description: 'What the rule compared it with, as the part holds (`≥ 5`); null inside a `not`' }),
});

export const explanation = z.object({
  id: z.string(),
  name: z.string(),
  score: z.number().int(),
  mode: z.enum(['live', 'dry_run']),
  outcome: z.enum(['fired', 'not_fired', 'unknown']).meta({ description: '`unknown`: an input was unknown, so it did not fire (`rule:<id>` in unavailable)' }),
  evidence: z.array(evidence).meta({ description: 'The facts it read, in order (`all` and `any` stop at the part that decides)' }),
});
