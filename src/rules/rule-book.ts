import type { Logger } from 'pino';
import type { SourceStatus } from '../core/ports.js';
import type { Account } from '../core/ports.js';
import type { EvaluationContext, RuleBook, ShadowOutcome } from './ports.js';
import { ruleSetLabel } from './rule-file.js';
import { evaluateRuleSet } from './engine.js';
import { formatProblem, parseRuleFile, RuleSetError, type RuleFileProblem } from './rule-file.js';
import type { RuleSet } from './rule-set.js';
import { velocityPlan, type VelocityPlan } from '../history/velocity.js';

/**
 * What the rule book reads from the store's snapshot: the published rule sets of active accounts
 * (texts only for versions not compiled yet) and their shadows. A port the store implements
 * (src/store/snapshot.ts), so rules depend on no adapter.
 */
export interface RuleSetSnapshot {
  /** The store's revision the snapshot was read at (reported in the rule book's status). */
  revision: number;
  ruleSets: ReadonlyArray<{ id: number; account_id: string; event_type: string; version: number; yaml: string | null }>;
  /**
   * Every active account's shadow rule sets (at most one per event type), with their text: a few
   * while a team tests a change, each at most 32 KiB; the rule book compiles a shadow once.
   */
  shadows: ReadonlyArray<{ account_id: string; event_type: string; rule_set_version: number; version: number; started_at: number; yaml: string }>;
}

/**
 * Every account's published rule sets, compiled, in memory: the request path reads a Map, never
 * the store. Swapped whole when the store changes. A published version is never edited, so each
 * is compiled once (by the one rule-file path, src/rules/rule-file.ts) and kept while it is live.
 */
export interface StoredRuleBook extends RuleBook {
  replace(snapshot: RuleSetSnapshot): void;
  /** Version ids compiled now: the store need not send their text again. */
  compiled(): ReadonlySet<number>;
  /** Each account's shadow rule sets (issue 16), from the same snapshots. */
  shadow(account: Account, context: EvaluationContext): ShadowOutcome | undefined;
}

interface Live {
  version: number;
  /** `rule_set_versions.id`, recorded with every evaluation it decides. */
  id: number;
  ruleSet: RuleSet;
}

interface AccountRules {
  eventTypes: string[];
  byEventType: Map<string, Live>;
  /** By event type: the counters its evaluations read and count (absent: none). */
  velocity: Map<string, VelocityPlan>;
}

const NONE: AccountRules = { eventTypes: [], byEventType: new Map(), velocity: new Map() };

interface Shadow {
  version: number;
  /** Which start of the shadow it is: a shadow started again (even on the same version) is compiled again. */
  key: string;
  ruleSet: RuleSet;
}

/**
 * Builds the rule book from the store's first snapshot. With `strict` (start-up), a published
 * version that no longer validates stops the start, naming account, event type, version, line and
 * path (PRODUCT.md: "at start-up the service does not start"); on a reload it is refused and the
 * version that served before keeps serving.
 */
export function createRuleBook(snapshot: RuleSetSnapshot, options: { logger: Logger }): StoredRuleBook {
  const logger = options.logger.child({ component: 'rules' });
  let compiled = new Map<number, RuleSet>();
  let accounts = new Map<string, AccountRules>();
  let refused = new Map<number, string>();
  /** By `account/event_type`. */
  let shadows = new Map<string, Shadow>();

  /** Shadows as the snapshot has them, compiled once per start; one that no longer validates is logged and not run. */
  const buildShadows = (next: RuleSetSnapshot) => {
    const built = new Map<string, Shadow>();
    for (const entry of next.shadows) {
      const at = `${entry.account_id}/${entry.event_type}`;
      const key = `${entry.rule_set_version}@${entry.started_at}`;
      const known = shadows.get(at);
      if (known?.key === key) {
        built.set(at, known);
        continue;
      }
      const parsed = parseRuleFile(entry.event_type, `${ruleSetLabel(entry.account_id, entry.event_type, entry.version)} in shadow`, entry.yaml);
      if ('ruleSet' in parsed) built.set(at, { version: entry.version, key, ruleSet: parsed.ruleSet });
      else logger.error({ shadow: at, problems: parsed.problems.map(formatProblem).join('; ') }, 'shadow rule set refused: it does not run');
    }
    shadows = built;
  };

  const build = (next: RuleSetSnapshot, strict: boolean) => {
    const nextCompiled = new Map<number, RuleSet>();
    const nextAccounts = new Map<string, AccountRules>();
    const nextRefused = new Map<number, string>();
    const problems: RuleFileProblem[] = [];
    for (const entry of next.ruleSets) {
      const label = ruleSetLabel(entry.account_id, entry.event_type, entry.version);
      let ruleSet = compiled.get(entry.id);
      if (ruleSet === undefined && entry.yaml !== null) {
        const parsed = parseRuleFile(entry.event_type, label, entry.yaml);
        if ('ruleSet' in parsed) ruleSet = parsed.ruleSet;
        else {
          problems.push(...parsed.problems);
          nextRefused.set(entry.id, parsed.problems.map(formatProblem).join('; '));
        }
      }
      // Refused: what served this account and event type before keeps serving.
      const live: Live | undefined = ruleSet ? { version: entry.version, id: entry.id, ruleSet } : accounts.get(entry.account_id)?.byEventType.get(entry.event_type);
      if (ruleSet) nextCompiled.set(entry.id, ruleSet);
      if (live === undefined) continue;
      let rules = nextAccounts.get(entry.account_id);
      if (rules === undefined) nextAccounts.set(entry.account_id, (rules = { eventTypes: [], byEventType: new Map(), velocity: new Map() }));
      rules.byEventType.set(entry.event_type, live);
    }
    if (strict && problems.length > 0) throw new RuleSetError(problems);
    for (const rules of nextAccounts.values()) {
      rules.eventTypes = [...rules.byEventType.keys()].sort();
      const all = [...rules.byEventType.values()].flatMap((live) => live.ruleSet.velocity);
      for (const [eventType, live] of rules.byEventType) {
        const plan = velocityPlan(eventType, live.ruleSet.velocity, all);
        if (plan !== null) rules.velocity.set(eventType, plan);
      }
    }
    for (const [id, message] of nextRefused) logger.error({ version_id: id, problems: message }, 'stored rule set refused; the version that served before keeps serving');
    compiled = nextCompiled;
    accounts = nextAccounts;
    refused = nextRefused;
    buildShadows(next);
  };
  build(snapshot, true);

  return {
    eventTypes: (account: Account) => (accounts.get(account.id) ?? NONE).eventTypes,
    evaluate(account, context) {
      const live = (accounts.get(account.id) ?? NONE).byEventType.get(context.event_type);
      if (live === undefined) return undefined;
      const outcome = evaluateRuleSet(context, live.ruleSet);
      outcome.rule_set_version = live.id;
      return outcome;
    },
    shadow(account, context): ShadowOutcome | undefined {
      if (shadows.size === 0) return undefined;
      const shadow = shadows.get(`${account.id}/${context.event_type}`);
      if (shadow === undefined) return undefined;
      const { fraud_score, state, fired, details, dry_run } = evaluateRuleSet(context, shadow.ruleSet);
      return { version: shadow.version, fraud_score, state, fired, details, dry_run };
    },
    velocity: (accountId, eventType) => accounts.get(accountId)?.velocity.get(eventType) ?? null,
    replace(next) {
      build(next, false);
      logger.info({ revision: next.revision, rule_sets: next.ruleSets.length, refused: refused.size }, 'rule sets loaded');
    },
    compiled: () => new Set(compiled.keys()),
    status(): SourceStatus[] {
      let count = 0;
      for (const rules of accounts.values()) count += rules.byEventType.size;
      return [{ name: 'rules', source: 'store', type: 'rules', loaded: true, build_date: null, entries: count, error: refused.size > 0 ? [...refused.values()].join('; ') : null }];
    },
    async close() {},
  };
}
