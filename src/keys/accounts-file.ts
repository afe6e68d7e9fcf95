import { z } from 'zod';
import { FILE_CAPS } from '../files/caps.js';
import { FileLimitError, readBoundedText } from '../files/read.js';
import { ACCOUNT_ID, ACCOUNT_ID_RULE } from './account-id.js';
import { MAX_KEYS_PER_ACCOUNT } from './key.js';

/**
 * The accounts file of versions before the store: several accounts, each with at most two keys
 * stored as hashes and an optional rules directory. It is only read now, to be imported once
 * (src/store/accounts-import.ts).
 *
 * { "accounts": [ { "id": "acme", "rules_dir": "/etc/risk/rules-acme",
 *     "keys": [ { "id": "key_3f2a…", "hash": "sha256:…", "created_at": "2026-11-21T…" } ] } ] }
 */
const storedKeySchema = z.object({
  /** Not kept: the store names a key by its hash (`key_` and 12 hex digits), as the old CLI did. */
  id: z.string().min(1),
  hash: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'must be "sha256:" followed by 64 hex digits (keys are stored hashed, never in plain text)'),
  created_at: z.iso.datetime(),
});

const accountSchema = z.object({
  id: z.string().regex(ACCOUNT_ID, `must be ${ACCOUNT_ID_RULE}`),
  rules_dir: z.string().min(1).optional(),
  keys: z.array(storedKeySchema).max(MAX_KEYS_PER_ACCOUNT, `an account has at most ${MAX_KEYS_PER_ACCOUNT} keys`),
});

export const accountsFileSchema = z
  .object({ accounts: z.array(accountSchema) })
  .superRefine((file, ctx) => {
    const ids = new Set<string>();
    const hashes = new Set<string>();
    file.accounts.forEach((account, i) => {
      if (ids.has(account.id)) ctx.addIssue({ code: 'custom', path: ['accounts', i, 'id'], message: `duplicate account "${account.id}"` });
      ids.add(account.id);
      account.keys.forEach((key, j) => {
        if (hashes.has(key.hash)) ctx.addIssue({ code: 'custom', path: ['accounts', i, 'keys', j, 'hash'], message: 'the same key is listed twice' });
        hashes.add(key.hash);
      });
    });
  });

export type AccountsFile = z.infer<typeof accountsFileSchema>;

export class AccountsFileError extends Error {
  override name = 'AccountsFileError';
  constructor(path: string, detail: string) {
    super(`${path}: ${detail}`);
  }
}

/** The file's text (its fingerprint says whether it was imported) and its validated content. */
export async function readAccountsFile(path: string): Promise<{ text: string; file: AccountsFile }> {
  let text: string;
  try {
    ({ text } = await readBoundedText(path, FILE_CAPS.accountsFile));
  } catch (error) {
    if (error instanceof FileLimitError) throw new AccountsFileError(path, `is refused: ${error.message}`);
    throw new AccountsFileError(path, `cannot be read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new AccountsFileError(path, `is not valid JSON (${(error as Error).message})`);
  }
  const parsed = accountsFileSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AccountsFileError(path, `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  }
  return { text, file: parsed.data };
}
