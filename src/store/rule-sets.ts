import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import { FILE_CAPS } from '../files/caps.js';
import { parseRuleFile, ruleSetLabel, RuleSetError, type RuleFileProblem } from '../rules/rule-file.js';
import type { RuleFileText } from '../rules/templates.js';
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

/** Every problem of a text as a rule file of the account (file, line, path); empty when it is valid. */
export function ruleFileProblems(account: string, file: RuleFileText): RuleFileProblem[] {
  const label = ruleSetLabel(account, file.eventType);
  if (!EVENT_TYPE.test(file.eventType)) {
    return [{ file: label, path: '', line: null, column: null, message: `event type "${file.eventType}": 1 to 64 letters, digits, _ or -` }];
  }
  const bytes = Buffer.byteLength(file.yaml);
  if (bytes > FILE_CAPS.ruleFile) return [{ file: label, path: '', line: null, column: null, message: `${bytes} bytes: a rule file is at most ${FILE_CAPS.ruleFile} bytes` }];
  const parsed = parseRuleFile(file.eventType, label, file.yaml);
  return 'problems' in parsed ? parsed.problems : [];
}

/** Throws a RuleSetError (file, line, path) when the text is not a valid rule file. */
export function validateRuleFile(account: string, file: RuleFileText): void {
  const problems = ruleFileProblems(account, file);
  if (problems.length > 0) throw new RuleSetError(problems);
}

const VERSION_COLUMNS = ['id', 'account_id', 'event_type', 'version', 'status', 'author', 'comment', 'created_at', 'published_at'] as const;

export class RuleSets {
  constructor(
    private readonly engine: Engine,
    private readonly now: () => number,
  ) {}

  /** Every version of an account's rule sets (or one event type's), newest first, without their text. */
  async list(account: string, eventType?: string, page: { beforeVersion?: number; limit?: number } = {}): Promise<RuleSetVersion[]> {
    let query = this.engine.db.selectFrom('rule_set_versions').select(VERSION_COLUMNS).where('account_id', '=', account);
    if (eventType !== undefined) query = query.where('event_type', '=', eventType);
    if (page.beforeVersion !== undefined) query = query.where('version', '<', page.beforeVersion);
    if (page.limit !== undefined) query = query.limit(page.limit);
    return query.orderBy('event_type').orderBy('version', 'desc').execute();
  }

  /** The live version and the draft of each event type of the account (what the console's cards show). */
  async current(account: string): Promise<RuleSetVersion[]> {
    return this.engine.db.selectFrom('rule_set_versions').select(VERSION_COLUMNS)
      .where('account_id', '=', account).where('status', 'in', ['published', 'draft']).orderBy('event_type').orderBy('version').execute();
  }

  /** The event type's version in `status` (published or draft: at most one each), with its text. */
  async inStatus(account: string, eventType: string, status: 'published' | 'draft'): Promise<RuleSetVersionWithText | undefined> {
    return this.engine.db.selectFrom('rule_set_versions').selectAll()
      .where('account_id', '=', account).where('event_type', '=', eventType).where('status', '=', status).executeTakeFirst();
  }

  /** A version by its store-wide id (what the evaluation log records), with its text. */
  async byId(id: number): Promise<RuleSetVersionWithText | undefined> {
    return this.engine.db.selectFrom('rule_set_versions').selectAll().where('id', '=', id).executeTakeFirst();
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
      return this.writeDraft(trx, account, file, by, true);
    });
  }

  /**
   * Changes the event type's draft, or starts one from its live version: `edit` gets the text it
   * starts from and returns the new one, read and written in one transaction with the account
   * locked, so two editors never overwrite each other's change unseen. `rebase`: the edit states the
   * whole file, so a draft older than the live version becomes the newest (see `publish`).
   */
  async editDraft(account: string, eventType: string, edit: (base: RuleSetVersionWithText) => string, by: { actor: string; comment: string | null }, rebase = false): Promise<RuleSetVersion> {
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const rows = await trx.selectFrom('rule_set_versions').selectAll()
        .where('account_id', '=', account).where('event_type', '=', eventType).where('status', 'in', ['draft', 'published']).execute();
      const base = rows.find((r) => r.status === 'draft') ?? rows.find((r) => r.status === 'published');
      if (!base) throw new StoreRequestError('not_found', `account "${account}" has no rule set for ${eventType}`);
      const file = { eventType, yaml: edit(base) };
      validateRuleFile(account, file);
      return this.writeDraft(trx, account, file, by, rebase);
    });
  }

  /** Saves each file as its event type's draft: every file or none (an import to review before publishing). */
  async saveDrafts(account: string, files: RuleFileText[], by: { actor: string; comment: string | null }): Promise<RuleSetVersion[]> {
    for (const file of files) validateRuleFile(account, file);
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const saved: RuleSetVersion[] = [];
      for (const file of files) saved.push(await this.writeDraft(trx, account, file, by, true));
      return saved;
    });
  }

  /** Deletes the event type's draft; the live version is untouched. */
  async discardDraft(account: string, eventType: string, by: { actor: string }): Promise<RuleSetVersion> {
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const draft = await trx.selectFrom('rule_set_versions').selectAll()
        .where('account_id', '=', account).where('event_type', '=', eventType).where('status', '=', 'draft').executeTakeFirst();
      if (!draft) throw new StoreRequestError('not_found', `${eventType} has no draft`);
      await trx.deleteFrom('rule_set_versions').where('id', '=', draft.id).execute();
      await appendAudit(trx, this.now(), { actor: by.actor, account_id: account, action: 'rule_set.draft.discard', target: `${eventType} v${draft.version}`, before: { yaml: draft.yaml }, after: null });
      return pick(draft);
    });
  }

  /** A new event type, its first version published at once (its requests are accepted from the next reload). */
  async create(account: string, file: RuleFileText, by: { actor: string; comment: string | null }): Promise<RuleSetVersion> {
    validateRuleFile(account, file);
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const existing = await trx.selectFrom('rule_set_versions').select('id').where('account_id', '=', account).where('event_type', '=', file.eventType).limit(1).executeTakeFirst();
      if (existing) throw new StoreRequestError('conflict', `account "${account}" already has a rule set for ${file.eventType}`);
      const at = this.now();
      const version = await this.insertVersion(trx, account, file, 'published', by, at);
      await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'rule_set.create', target: file.eventType, before: null, after: { version: version.version, comment: by.comment, yaml: file.yaml } });
      await bumpRevision(trx);
      return version;
    });
  }

  /**
   * Publishes an earlier version's text again, as a new version (history only grows: the log's
   * evaluations keep pointing at the versions that decided them). The draft, if any, stays.
   */
  async rollback(account: string, eventType: string, version: number, by: { actor: string; comment: string | null }): Promise<RuleSetVersion> {
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const earlier = await trx.selectFrom('rule_set_versions').selectAll()
        .where('account_id', '=', account).where('event_type', '=', eventType).where('version', '=', version).executeTakeFirst();
      if (!earlier || earlier.status === 'draft') throw new StoreRequestError('not_found', `account "${account}" has no earlier version ${version} of ${eventType}`);
      if (earlier.status === 'published') throw new StoreRequestError('conflict', `version ${version} of ${eventType} is the published one`);
      const file = { eventType, yaml: earlier.yaml };
      validateRuleFile(account, file);
      const at = this.now();
      const previous = await this.archivePublished(trx, account, eventType);
      const created = await this.insertVersion(trx, account, file, 'published', { actor: by.actor, comment: by.comment ?? `rollback to version ${version}` }, at);
      await appendAudit(trx, at, {
        actor: by.actor, account_id: account, action: 'rule_set.rollback', target: eventType,
        before: previous === undefined ? null : { version: previous }, after: { version: created.version, from_version: version, comment: created.comment },
      });
      await bumpRevision(trx);
      return created;
    });
  }

  /**
   * Creates or replaces the draft. With `rebase`, a draft older than the live version (something
   * was published while it waited) takes the next number: saving the whole text again is how its
   * author says it was reviewed against what is live now.
   */
  private async writeDraft(trx: Transaction<Database>, account: string, file: RuleFileText, by: { actor: string; comment: string | null }, rebase: boolean): Promise<RuleSetVersion> {
    const at = this.now();
    const draft = await trx.selectFrom('rule_set_versions').selectAll()
      .where('account_id', '=', account).where('event_type', '=', file.eventType).where('status', '=', 'draft').executeTakeFirst();
    if (draft) {
      const live = rebase ? await this.liveVersion(trx, account, file.eventType) : undefined;
      const version = live !== undefined && live > draft.version ? await this.nextVersion(trx, account, file.eventType) : draft.version;
      await trx.updateTable('rule_set_versions').set({ yaml: file.yaml, comment: by.comment, author: by.actor, created_at: at, version }).where('id', '=', draft.id).execute();
      await appendAudit(trx, at, {
        actor: by.actor, account_id: account, action: 'rule_set.draft.update', target: `${file.eventType} v${version}`,
        before: { yaml: draft.yaml, ...(version !== draft.version ? { version: draft.version } : {}) }, after: { yaml: file.yaml, ...(version !== draft.version ? { version } : {}) },
      });
      return { ...pick(draft), version, author: by.actor, comment: by.comment, created_at: at };
    }
    const version = await this.insertVersion(trx, account, file, 'draft', by, at);
    await appendAudit(trx, at, { actor: by.actor, account_id: account, action: 'rule_set.draft.create', target: `${file.eventType} v${version.version}`, before: null, after: { yaml: file.yaml } });
    return version;
  }

  /**
   * Makes the draft `version` the live one; the version it replaces is archived in the same
   * transaction. (An earlier version comes back with `rollback`, as a new version.)
   */
  async publish(account: string, eventType: string, version: number, by: { actor: string; comment: string | null; expectedSha256?: string }): Promise<RuleSetVersion> {
    return this.engine.db.transaction().execute(async (trx) => {
      await this.requireAccount(trx, account);
      const target = await trx.selectFrom('rule_set_versions').selectAll()
        .where('account_id', '=', account).where('event_type', '=', eventType).where('version', '=', version).executeTakeFirst();
      if (!target) throw new StoreRequestError('not_found', `account "${account}" has no version ${version} of ${eventType}`);
      if (by.expectedSha256 !== undefined && createHash('sha256').update(target.yaml).digest('hex') !== by.expectedSha256) {
        throw new StoreRequestError('conflict', `the draft of ${eventType} changed since it was read (its yaml_sha256 differs): review it again`);
      }
      if (target.status !== 'draft') throw new StoreRequestError('conflict', `version ${version} of ${eventType} is ${target.status === 'published' ? 'already the published one' : 'archived: roll back to it instead'}`);
      // Published over while it waited (an import, a rollback): publishing it now would undo that unseen.
      const live = await this.liveVersion(trx, account, eventType);
      if (live !== undefined && live > version) {
        throw new StoreRequestError('conflict', `version ${live} of ${eventType} was published after this draft (version ${version}) was started: review the diff against it, then save the draft again or discard it`);
      }
      const at = this.now();
      const previous = await this.archivePublished(trx, account, eventType);
      await trx.updateTable('rule_set_versions')
        .set({ status: 'published', published_at: at, ...(by.comment !== null ? { comment: by.comment } : {}) })
        .where('id', '=', target.id).execute();
      await appendAudit(trx, at, {
        actor: by.actor, account_id: account, action: 'rule_set.publish', target: eventType,
        before: previous === undefined ? null : { version: previous }, after: { version, comment: by.comment ?? target.comment },
      });
      await bumpRevision(trx);
      return { ...pick(target), status: 'published' as const, published_at: at, comment: by.comment ?? target.comment };
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

  private async nextVersion(trx: Transaction<Database>, account: string, eventType: string): Promise<number> {
    const last = await trx.selectFrom('rule_set_versions').select((eb) => eb.fn.max('version').as('version'))
      .where('account_id', '=', account).where('event_type', '=', eventType).executeTakeFirst();
    return (last?.version ?? 0) + 1;
  }

  private async liveVersion(trx: Transaction<Database>, account: string, eventType: string): Promise<number | undefined> {
    const live = await trx.selectFrom('rule_set_versions').select('version')
      .where('account_id', '=', account).where('event_type', '=', eventType).where('status', '=', 'published').executeTakeFirst();
    return live?.version;
  }

  private async archivePublished(trx: Transaction<Database>, account: string, eventType: string): Promise<number | undefined> {
    const live = await trx.updateTable('rule_set_versions').set({ status: 'archived' })
      .where('account_id', '=', account).where('event_type', '=', eventType).where('status', '=', 'published')
      .returning('version').executeTakeFirst();
    return live?.version;
  }

  private async insertVersion(trx: Transaction<Database>, account: string, file: RuleFileText, status: RuleSetStatus, by: { actor: string; comment: string | null }, at: number): Promise<RuleSetVersion> {
    const row = {
      account_id: account, event_type: file.eventType, version: await this.nextVersion(trx, account, file.eventType), status, yaml: file.yaml,
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
