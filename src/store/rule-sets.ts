import type { Transaction } from 'kysely';
import { parseRuleFile, RuleSetError } from '../rules/rule-file.js';
import { appendAudit } from './audit.js';
import type { Engine } from './engine.js';
import { StoreRequestError } from './errors.js';
import { bumpRevision } from './revision.js';
import type { Database, RuleSetStatus } from './schema.js';

/**
 * Rule sets as numbered versions per account and event type (PRODUCT.md "Rules"): at most one
 * draft, exactly one published, the rest archived. Publishing and rolling back are one transaction
 * each, so a replica never reads two live versions or none. Every YAML text is validated by the
 * one rule-file path (src/rules/rule-file.ts) before it is stored, whichever door it came in by.
 */
export const EVENT_TYPE = /^[A-Za-z0-9_-]{1,64}$/;

export interface RuleFileText {
  eventType: string;
  yaml: string;
}

/** The rule sets a new account starts with, and the comment their first versions carry. */
export interface RuleSeed {
  files: RuleFileText[];
  comment: string;
}

export interface RuleSetVersion {
  id: number;
  account_id: string;
  event_type: string;
  version: number;
  status: RuleSetStatus;
  author: string;
  comment: string | null;
  created_at: number;
  published_at: number | null;
}

export type RuleSetVersionWithText = RuleSetVersion & { yaml: string };

export interface ApplyResult {
  eventType: string;
  /** The version now published; `unchanged` when the text was already the published one. */
  version: number;
  outcome: 'published' | 'unchanged';
}

/** How a stored rule set names itself in errors and status: where it came from. */
export const ruleSetLabel = (account: string, eventType: string, version?: number) =>
  `${account}/${eventType}.yaml${version === undefined ? '' : ` (v${version})`}`;

/** Throws a RuleSetError (file, line, path) when the text is not a valid rule file. */
export function validateRuleFile(account: string, file: RuleFileText): void {
  if (!EVENT_TYPE.test(file.eventType)) {
    throw new StoreRequestError('invalid', `event type "${file.eventType}": 1 to 64 letters, digits, _ or -`);
  }
  const parsed = parseRuleFile(file.eventType, ruleSetLabel(account, file.eventType), file.yaml);
  if ('problems' in parsed) throw new RuleSetError(parsed.problems);
}

const VERSION_COLUMNS = ['id', 'account_id', 'event_type', 'version', 'status', 'author', 'comment', 'created_at', 'published_at'] as const;

export class RuleSets {
  constructor(
    private readonly engine: Engine,
    private readonly now: () => number,
  ) {}

  /** Every version of an account's rule sets (or one event type's), newest first, without their text. */
  async list(account: string, eventType?: string): Promise<RuleSetVersion[]> {
    let query = this.engine.db.selectFrom('rule_set_versions').select(VERSION_COLUMNS).where('account_id', '=', account);
    if (eventType !== undefined) query = query.where('event_type', '=', eventType);
    return query.orderBy('event_type').orderBy('version', 'desc').execute();
  }

  async get(account: string, eventType: string, version: number): Promise<RuleSetVersionWithText | undefined> {
    return this.engine.db.selectFrom('rule_set_versions').selectAll()
      .where('account_id', '=', account).where('event_type', '=', eventType).where('version', '=', version)
      .executeTakeFirst();
  }

  /** The live version of each event type, with its text (for export). */
  async published(account: string): Promise<RuleSetVersionWithText[]> {
    return this.engine.db.selectFrom('rule_set_versions').selectAll()
      .where('account_id', '=', account).where('status', '=', 'published').orderBy('event_type').execute();
  }

  /**
   * Publishes each file whose text differs from its event type's live version, in one transaction:
   * every file or none. Event types not among the files keep their live version.
   */
  async apply(account: string, files: RuleFileText[], by: { actor: string; comment: string | null }): Promise<ApplyResult[]> {
    return this.engine.db.transaction().execute((trx) => this.applyIn(trx, account, files, by));
  }

  /** `apply` inside a transaction the caller holds (an import that also adds accounts and keys). */
  async applyIn(trx: Transaction<Database>, account: string, files: RuleFileText[], by: { actor: string; comment: string | null }): Promise<ApplyResult[]> {
    for (const file of files) validateRuleFile(account, file);
    await this.requireAccount(trx, account);
    const results: ApplyResult[] = [];
    for (const file of files) results.push(await this.publishText(trx, account, file, by));
    if (results.some((r) => r.outcome === 'published')) await bumpRevision(trx);
    return results;
  }

  /** Creates the event type's draft, or replaces its text: there is at most one draft at a time. */
  async saveDraft(account: string, file: RuleFileText, by: { actor: string; comment: string | null }): Promise<RuleSetVersion> {
    validateRuleFile(account, file);
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const at = this.now();
      const draft = await trx.selectFrom('rule_set_versions').selectAll()
        .where('account_id', '=', account).where('event_type', '=', file.eventType).where('status', '=', 'draft').executeTakeFirst();
      if (draft) {
        await trx.updateTable('rule_set_versions').set({ yaml: file.yaml, comment: by.comment, author: by.actor, created_at: at }).where('id', '=', draft.id).execute();
        await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'rule_set.draft.update', target: `${file.eventType} v${draft.version}`, before: { yaml: draft.yaml }, after: { yaml: file.yaml } });
        return { ...pick(draft), author: by.actor, comment: by.comment, created_at: at };
      }
      const version = await this.insertVersion(trx, account, file, 'draft', by, at);
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'rule_set.draft.create', target: `${file.eventType} v${version.version}`, before: null, after: { yaml: file.yaml } });
      return version;
    });
  }

  /**
   * Makes `version` the live one: the draft (publish) or an archived version (a rollback). The
   * version it replaces is archived in the same transaction.
   */
  async publish(account: string, eventType: string, version: number, by: { actor: string; comment: string | null }): Promise<RuleSetVersion> {
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const target = await trx.selectFrom('rule_set_versions').select(VERSION_COLUMNS)
        .where('account_id', '=', account).where('event_type', '=', eventType).where('version', '=', version).executeTakeFirst();
      if (!target) throw new StoreRequestError('not_found', `account "${account}" has no version ${version} of ${eventType}`);
      if (target.status === 'published') throw new StoreRequestError('conflict', `version ${version} of ${eventType} is already the published one`);
      const at = this.now();
      const previous = await this.archivePublished(trx, account, eventType);
      await trx.updateTable('rule_set_versions')
        .set({ status: 'published', published_at: at, ...(by.comment !== null ? { comment: by.comment } : {}) })
        .where('id', '=', target.id).execute();
      await appendAudit(trx, at, {
        actor: by.actor, account_id: account, action: target.status === 'draft' ? 'rule_set.publish' : 'rule_set.rollback', target: eventType,
        before: previous === undefined ? null : { version: previous }, after: { version, comment: by.comment ?? target.comment },
      });
      await bumpRevision(trx);
      return { ...target, status: 'published' as const, published_at: at, comment: by.comment ?? target.comment };
    });
  }

  /** Inside a transaction: version 1 of each file, published, for an account just created. */
  async seed(trx: Transaction<Database>, account: string, seed: RuleSeed, actor: string, at: number): Promise<void> {
    for (const file of seed.files) {
      validateRuleFile(account, file);
      await this.insertVersion(trx, account, file, 'published', { actor, comment: seed.comment }, at);
    }
  }

  private async publishText(trx: Transaction<Database>, account: string, file: RuleFileText, by: { actor: string; comment: string | null }): Promise<ApplyResult> {
    const live = await trx.selectFrom('rule_set_versions').select(['version', 'yaml'])
      .where('account_id', '=', account).where('event_type', '=', file.eventType).where('status', '=', 'published').executeTakeFirst();
    if (live?.yaml === file.yaml) return { eventType: file.eventType, version: live.version, outcome: 'unchanged' };
    const at = this.now();
    await this.archivePublished(trx, account, file.eventType);
    const created = await this.insertVersion(trx, account, file, 'published', by, at);
    await appendAudit(trx, at, {
      actor: by.actor, account_id: account, action: 'rule_set.publish', target: file.eventType,
      before: live ? { version: live.version } : null, after: { version: created.version, comment: by.comment },
    });
    return { eventType: file.eventType, version: created.version, outcome: 'published' };
  }

  private async archivePublished(trx: Transaction<Database>, account: string, eventType: string): Promise<number | undefined> {
    const live = await trx.updateTable('rule_set_versions').set({ status: 'archived' })
      .where('account_id', '=', account).where('event_type', '=', eventType).where('status', '=', 'published')
      .returning('version').executeTakeFirst();
    return live?.version;
  }

  private async insertVersion(trx: Transaction<Database>, account: string, file: RuleFileText, status: RuleSetStatus, by: { actor: string; comment: string | null }, at: number): Promise<RuleSetVersion> {
    const last = await trx.selectFrom('rule_set_versions').select((eb) => eb.fn.max('version').as('version'))
      .where('account_id', '=', account).where('event_type', '=', file.eventType).executeTakeFirst();
    const row = {
      account_id: account, event_type: file.eventType, version: (last?.version ?? 0) + 1, status, yaml: file.yaml,
      author: by.actor, comment: by.comment, created_at: at, published_at: status === 'published' ? at : null,
    };
    const { id } = await trx.insertInto('rule_set_versions').values(row).returning('id').executeTakeFirstOrThrow();
    return pick({ id, ...row });
  }

  private async requireAccount(trx: Transaction<Database>, account: string): Promise<void> {
    // Locks the account: two changes to its rule sets never number a version twice.
    if (!(await this.engine.lockAccount(trx, account))) throw new StoreRequestError('not_found', `no account "${account}"`);
  }
}

function pick(row: RuleSetVersion & { yaml?: string }): RuleSetVersion {
  const { yaml: _yaml, ...version } = row;
  return version;
}
