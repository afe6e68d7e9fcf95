import { z } from 'zod';
import { parseCidrRanges } from './cidr.js';
import { ANSWER_STATES, MAX_COUNTERS, parseWindow, VELOCITY_KEYS } from '../history/velocity.js';
import { FIELD_PATHS, fieldAt, isRulePath, isVelocityPath, VELOCITY_FIELD, type FieldType, type RulePath, type Scalar } from './fields.js';
import { LIBRARY_IDS, libraryRule } from './library.js';
import { compilePattern, MAX_FILE_INSTRUCTIONS } from './pattern.js';

/**
 * The rule file format, written once: it validates files on load and in `rules:check`, types the
 * compiler, and is published as `rules/schema.json` (scripts/rules-schema.ts) for editors.
 */

export const OPERATORS = [
  'equals', 'not_equals', 'in', 'not_in', 'gt', 'gte', 'lt', 'lte', 'exists', 'ends_with', 'cidr', 'matches',
] as const;
export type Operator = (typeof OPERATORS)[number];
const COMBINATORS = ['all', 'any', 'not'] as const;

export interface ConditionInput {
  all?: ConditionInput[];
  any?: ConditionInput[];
  not?: ConditionInput;
  field?: RulePath;
  equals?: Scalar;
  not_equals?: Scalar;
  in?: Scalar[];
  not_in?: Scalar[];
  gt?: number;
  gte?: number;
  lt?: number;
  lte?: number;
  exists?: boolean;
  ends_with?: string | string[];
  cidr?: string | string[];
  matches?: string;
}

/** JSON Schema for "has any of these keys", to say what a shape must not have. */
const anyKey = (keys: readonly string[]) => ({ anyOf: keys.map((key) => ({ required: [key] })) });

const scalar = z.union([z.string(), z.number(), z.boolean()]);
const oneOrMany = (description: string) =>
  z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional().meta({ description });

/** Which operators each field type accepts, and the value type they compare with. */
export const VALUE_TYPE: Record<FieldType, 'string' | 'number' | 'boolean'> = { text: 'string', ip: 'string', number: 'number', boolean: 'boolean' };
const TYPE_NAME: Record<FieldType, string> = { text: 'text', ip: 'an IP address', number: 'a number', boolean: 'a boolean' };
const ACCEPTS: Record<Operator, (type: FieldType) => boolean> = {
  equals: () => true,
  not_equals: () => true,
  in: () => true,
  not_in: () => true,
  gt: (t) => t === 'number',
  gte: (t) => t === 'number',
  lt: (t) => t === 'number',
  lte: (t) => t === 'number',
  exists: () => true,
  ends_with: (t) => t === 'text' || t === 'ip',
  matches: (t) => t === 'text' || t === 'ip',
  cidr: (t) => t === 'ip',
};

export const conditionSchema: z.ZodType<ConditionInput> = z.lazy(() =>
  z
    .strictObject({
      all: z.array(conditionSchema).min(1).optional().meta({ description: 'True when every condition is true.' }),
      any: z.array(conditionSchema).min(1).optional().meta({ description: 'True when at least one condition is true.' }),
      not: conditionSchema.optional().meta({ description: 'True when the condition is false (unknown stays unknown).' }),
      field: (z.string().refine(isRulePath, {
        error: (issue) => `unknown field ${JSON.stringify(issue.input)} (docs/rules.md lists the fields; a velocity counter of the file reads as velocity.<name>)`,
      }) as unknown as z.ZodType<RulePath>).optional().meta({
        description: 'The fact to compare, e.g. email.domain, ip.asn, user.user_id, or velocity.<name> for a counter of the file.',
        // For editors: a fixed field, or a counter (the loader checks the file defines it).
        anyOf: [{ enum: FIELD_PATHS }, { type: 'string', pattern: VELOCITY_FIELD.source }],
      }),
      equals: scalar.optional().meta({ description: 'The field equals this value (same type as the field).' }),
      not_equals: scalar.optional().meta({ description: 'The field is present and differs from this value.' }),
      in: z.array(scalar).min(1).optional().meta({ description: 'The field is one of these values.' }),
      not_in: z.array(scalar).min(1).optional().meta({ description: 'The field is present and none of these values.' }),
      gt: z.number().optional().meta({ description: 'Numeric field greater than.' }),
      gte: z.number().optional().meta({ description: 'Numeric field greater than or equal to.' }),
      lt: z.number().optional().meta({ description: 'Numeric field less than.' }),
      lte: z.number().optional().meta({ description: 'Numeric field less than or equal to.' }),
      exists: z.boolean().optional().meta({ description: 'true: the field was sent / found; false: it was not.' }),
      ends_with: oneOrMany('Text field ends with this suffix (or one of these), case-sensitive.'),
      cidr: oneOrMany('ip.address is inside this CIDR range (or one of these), IPv4 or IPv6.'),
      matches: z.string().optional().meta({
        description: 'Text field matches this regular expression (RE2 syntax, linear-time: no back-references or look-arounds; at most 200 characters).',
      }),
    })
    .superRefine(checkCondition),
).meta({
      id: 'condition',
      description: 'Either one of all / any / not, or a field with exactly one operator.',
      // Editors learn the "exactly one" shape from this; the loader checks it in checkCondition.
      oneOf: [
        ...COMBINATORS.map((c) => ({ required: [c], maxProperties: 1 })),
        { required: ['field'], minProperties: 2, maxProperties: 2, not: anyKey(COMBINATORS) },
      ],
    });

/** The operators a condition on a field of this type may use (the admin API's field catalogue). */
export const operatorsFor = (type: FieldType): Operator[] => OPERATORS.filter((operator) => ACCEPTS[operator](type));

function checkCondition(condition: ConditionInput, ctx: z.RefinementCtx): void {
  const keys = Object.keys(condition);
  const combinators = keys.filter((k) => (COMBINATORS as readonly string[]).includes(k));
  const operators = keys.filter((k): k is Operator => (OPERATORS as readonly string[]).includes(k));
  const issue = (message: string, path: (string | number)[] = []) => ctx.addIssue({ code: 'custom', message, path });
  if (combinators.length > 0) {
    if (keys.length > 1) issue(`a condition with "${combinators[0]}" takes no other key (found ${keys.join(', ')})`);
    return;
  }
  if (condition.field === undefined) return issue(`a condition needs "field" and one operator, or one of ${COMBINATORS.join(', ')}`);
  if (operators.length !== 1) {
    return issue(`a condition on a field needs exactly one operator (${OPERATORS.join(', ')}); found ${operators.length === 0 ? 'none' : operators.join(', ')}`);
  }
  const operator = operators[0]!;
  // An unknown field is reported where the field is checked.
  if (!isRulePath(condition.field)) return;
  const type = fieldAt(condition.field).type;
  if (!ACCEPTS[operator](type)) return issue(`"${operator}" does not apply to ${condition.field}, which is ${TYPE_NAME[type]}`, [operator]);
  checkValues(condition, operator, type, issue);
}

function checkValues(condition: ConditionInput, operator: Operator, type: FieldType, issue: (m: string, p?: (string | number)[]) => void): void {
  const expected = VALUE_TYPE[type];
  if (operator === 'equals' || operator === 'not_equals') {
    if (typeof condition[operator] !== expected) issue(`${condition.field} is ${TYPE_NAME[type]}: compare it with a ${expected}`, [operator]);
  } else if (operator === 'in' || operator === 'not_in') {
    condition[operator]!.forEach((value, i) => {
      if (typeof value !== expected) issue(`${condition.field} is ${TYPE_NAME[type]}: list ${expected} values`, [operator, i]);
    });
  } else if (operator === 'cidr') {
    const ranges = condition.cidr!;
    const texts = Array.isArray(ranges) ? ranges : [ranges];
    const parsed = parseCidrRanges(texts);
    if ('invalid' in parsed) {
      issue(`"${texts[parsed.invalid]}" is not an IP address or CIDR range`, Array.isArray(ranges) ? ['cidr', parsed.invalid] : ['cidr']);
    }
  } else if (operator === 'matches') {
    const pattern = compilePattern(condition.matches!);
    if ('problem' in pattern) issue(pattern.problem, ['matches']);
  }
}

export const MODES = ['live', 'dry_run', 'off'] as const;
export type Mode = (typeof MODES)[number];

const score = z.number().int().min(-100).max(100);
const mode = z.enum(MODES).optional().meta({ description: 'live (default): counted; dry_run: evaluated and reported apart, not counted; off: not evaluated.' });

export const ruleSchema = z
  .strictObject({
    library: z.enum(LIBRARY_IDS, { error: (issue) => `unknown library rule ${JSON.stringify(issue.input)} (one of ${LIBRARY_IDS.join(', ')})` }).optional().meta({ description: 'Enable a built-in rule by id (see docs/rules.md).' }),
    id: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'lower-case letters, digits and _, starting with a letter').optional()
      .meta({ description: 'A custom rule\'s stable id, unique in the file; reported as rule:<id> when its input is unknown.' }),
    name: z.string().min(1).max(200).optional().meta({ description: 'The name the response shows in score.details.' }),
    description: z.string().max(2000).optional(),
    score: score.optional().meta({ description: 'Points added when the rule fires, -100..100; negative lowers the risk. Library rules default to their own score.' }),
    mode,
    params: z.record(z.string(), z.number()).optional().meta({ description: 'A library rule\'s thresholds, by name (docs/rules.md lists each rule\'s, with defaults and bounds).' }),
    when: conditionSchema.optional(),
  })
  .superRefine((rule, ctx) => {
    if (rule.library !== undefined) {
      for (const key of ['id', 'name', 'description', 'when'] as const) {
        if (rule[key] !== undefined) ctx.addIssue({ code: 'custom', message: `a library rule takes only score, mode and params`, path: [key] });
      }
      checkParams(rule.library, rule.params, ctx);
      return;
    }
    if (rule.params !== undefined) ctx.addIssue({ code: 'custom', message: 'params set a library rule\'s thresholds; a custom rule writes them in its condition', path: ['params'] });
    for (const key of ['id', 'name', 'score', 'when'] as const) {
      if (rule[key] === undefined) ctx.addIssue({ code: 'custom', message: `a custom rule needs "${key}" (or "library" to enable a built-in rule)` });
    }
  })
  .meta({
    id: 'rule',
    oneOf: [
      { required: ['library'], not: anyKey(['id', 'name', 'description', 'when']) },
      { required: ['id', 'name', 'score', 'when'], not: anyKey(['library', 'params']) },
    ],
  });

/** A library rule's `params`: names it declares, numbers within their bounds; each problem at `params.<name>`. */
function checkParams(id: string, params: Record<string, number> | undefined, ctx: z.RefinementCtx): void {
  if (params === undefined) return;
  const declared = libraryRule(id)?.parameters ?? {};
  const names = Object.keys(declared);
  for (const [name, value] of Object.entries(params)) {
    const parameter = declared[name];
    if (parameter === undefined) {
      const takes = names.length === 0 ? `${id} takes no params` : `${id} takes ${names.join(', ')}`;
      ctx.addIssue({ code: 'custom', message: `unknown parameter "${name}": ${takes}`, path: ['params', name] });
    } else if (!Number.isInteger(value) || value < parameter.min || value > parameter.max) {
      ctx.addIssue({ code: 'custom', message: `${name} must be a whole number from ${parameter.min} to ${parameter.max}`, path: ['params', name] });
    }
  }
}

/** The counter the library rule domain_velocity reads (rule-set.ts defines it when the file enables the rule). */
export const LIBRARY_COUNTERS = ['domain_velocity'] as const;

export const counterSchema = z
  .strictObject({
    name: z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'lower-case letters, digits and _, starting with a letter')
      .meta({ description: 'Rules read the counter as velocity.<name>.' }),
    key: z.enum(VELOCITY_KEYS, { error: (issue) => `unknown key ${JSON.stringify(issue.input)} (one of ${VELOCITY_KEYS.join(', ')})` })
      .meta({ description: 'What the count is per: an e-mail domain or canonical address, an IP address or its network (IPv4 /24, IPv6 /64), a device hash, a user id.' }),
    window: z.string().superRefine((text, ctx) => {
      const window = parseWindow(text);
      if ('problem' in window) ctx.addIssue({ code: 'custom', message: window.problem });
    }).meta({ description: 'How far back it counts: 1m to 30d (m, h or d), e.g. 10m, 1h, 7d. Up to 2h by the minute, up to 7d by the hour (whole hours), beyond by the day (whole days).' }),
    event_types: z.array(z.string().min(1).max(64)).min(1).max(20).optional()
      .meta({ description: 'The event types it counts; by default the file\'s own.' }),
    states: z.array(z.enum(ANSWER_STATES, { error: (issue) => `unknown state ${JSON.stringify(issue.input)} (one of ${ANSWER_STATES.join(', ')})` })).min(1).max(3).optional()
      .meta({ description: 'Count only events answered with one of these states (e.g. [decline]: declined logins); by default every event. Counted once the rules decided, so the value never includes the event being evaluated.' }),
    description: z.string().max(2000).optional(),
  })
  .meta({ id: 'velocity_counter', description: 'A named count of events per key in a sliding window (docs/rules.md "Velocity counters").' });

export const DEFAULT_THRESHOLDS = { review: 20, decline: 40 } as const;

const threshold = z.number().int().min(0).max(100);
export const ruleFileSchema = z
  .strictObject({
    $schema: z.string().optional(),
    description: z.string().optional(),
    thresholds: z
      .strictObject({
        review: threshold.default(DEFAULT_THRESHOLDS.review).meta({ description: 'Scores from here (inclusive) are review.' }),
        decline: threshold.default(DEFAULT_THRESHOLDS.decline).meta({ description: 'Scores from here (inclusive) are decline.' }),
      })
      .refine((t) => t.review <= t.decline, { message: 'review must not be above decline' })
      .optional()
      .meta({ description: 'Band edges, half-open: approve below review, review from review up to decline, decline from decline. Defaults 20 and 40.' }),
    velocity: z.array(counterSchema).max(MAX_COUNTERS, `at most ${MAX_COUNTERS} velocity counters per rule file`).optional()
      .meta({ description: `Velocity counters rules read as velocity.<name> (at most ${MAX_COUNTERS}).` }),
    rules: z.array(ruleSchema).meta({ description: 'Evaluated and reported in this order.' }),
  })
  .superRefine((file, ctx) => {
    const seen = new Set<string>();
    file.rules.forEach((rule, i) => {
      const id = rule.library ?? rule.id;
      if (id === undefined) return;
      if (seen.has(id)) ctx.addIssue({ code: 'custom', message: `rule "${id}" appears twice`, path: ['rules', i] });
      seen.add(id);
    });
    checkPatternBudget(file.rules, ctx);
    checkCounters(file, ctx);
  })
  .meta({ title: 'Risk evaluation rule file', description: 'One event type\'s rules. See docs/rules.md.' });

/** Counter names are unique and not the library's; every velocity.<name> a rule reads is a counter of the file. */
function checkCounters(file: { velocity?: Array<{ name: string }>; rules: RuleInput[] }, ctx: z.RefinementCtx): void {
  const names = new Set<string>();
  file.velocity?.forEach((counter, i) => {
    if (names.has(counter.name)) ctx.addIssue({ code: 'custom', message: `velocity counter "${counter.name}" appears twice`, path: ['velocity', i, 'name'] });
    if ((LIBRARY_COUNTERS as readonly string[]).includes(counter.name)) {
      ctx.addIssue({ code: 'custom', message: `"${counter.name}" is the library rule ${counter.name}'s own counter: choose another name`, path: ['velocity', i, 'name'] });
    }
    names.add(counter.name);
  });
  const visit = (condition: ConditionInput | undefined, path: (string | number)[]): void => {
    if (condition === undefined) return;
    condition.all?.forEach((c, i) => visit(c, [...path, 'all', i]));
    condition.any?.forEach((c, i) => visit(c, [...path, 'any', i]));
    visit(condition.not, [...path, 'not']);
    const field = condition.field;
    if (field !== undefined && isVelocityPath(field) && !names.has(field.slice('velocity.'.length))) {
      const defined = names.size === 0 ? 'the file defines none (add it under velocity:)' : `the file defines ${[...names].join(', ')}`;
      ctx.addIssue({ code: 'custom', message: `no velocity counter "${field.slice('velocity.'.length)}": ${defined}`, path: [...path, 'field'] });
    }
  };
  file.rules.forEach((rule, i) => visit(rule.when, ['rules', i, 'when']));
}

/** One evaluation runs every pattern of the file: their sizes together bound its cost (pattern.ts). */
function checkPatternBudget(rules: RuleInput[], ctx: z.RefinementCtx): void {
  let total = 0;
  const visit = (condition: ConditionInput | undefined, path: (string | number)[]): void => {
    if (condition === undefined) return;
    condition.all?.forEach((c, i) => visit(c, [...path, 'all', i]));
    condition.any?.forEach((c, i) => visit(c, [...path, 'any', i]));
    visit(condition.not, [...path, 'not']);
    if (condition.matches === undefined) return;
    const pattern = compilePattern(condition.matches);
    if ('problem' in pattern) return; // reported where the condition is checked
    total += pattern.instructions;
    if (total > MAX_FILE_INSTRUCTIONS && total - pattern.instructions <= MAX_FILE_INSTRUCTIONS) {
      ctx.addIssue({
        code: 'custom',
        message: `the file's regular expressions compile to more than ${MAX_FILE_INSTRUCTIONS} instructions together (this one brings them to ${total}): use fewer or simpler patterns`,
        path: [...path, 'matches'],
      });
    }
  };
  rules.forEach((rule, i) => visit(rule.when, ['rules', i, 'when']));
}

export type RuleFile = z.output<typeof ruleFileSchema>;
export type RuleInput = z.output<typeof ruleSchema>;
