import { z } from 'zod';
import { MAX_KEYS_PER_ACCOUNT } from '../../keys/key.js';
import { DEFAULT_ACCOUNT, type KeyInfo } from '../../store/accounts.js';
import { adminRoute } from '../route.js';
import { accountParams, iso, isoOrNull, time } from '../schemas.js';

/**
 * An account's API keys (spec §5.3–5.5, PRODUCT.md "Keys and accounts"): at most two, both valid
 * at once; listed by id, prefix, created and last used (never the key, never its hash); a new key
 * is in the answer that makes it, once. Analysts read the list; making, rotating and revoking need
 * the account's admin role. A change reaches this replica at once and every other within
 * RELOAD_INTERVAL_MS.
 */
const keyInfo = z.object({
  id: z.string().meta({ example: 'key_3f2a9c0d1b4e' }),
  prefix: z.string().nullable().describe('The key\'s first characters; null for a key imported as a hash'),
  created_at: time,
  created_by: z.string(),
  last_used_at: time.nullable().describe('Written at most once a minute'),
});
const infoOf = (k: KeyInfo): z.output<typeof keyInfo> => ({ id: k.id, prefix: k.prefix, created_at: iso(k.created_at), created_by: k.created_by, last_used_at: isoOrNull(k.last_used_at) });
const example = { id: 'key_3f2a9c0d1b4e', prefix: 'rk_Ab3dE9', created_at: '2026-11-21T12:00:00.000Z', created_by: 'user:usr_4f1c2a9b7d3e8f60', last_used_at: '2026-11-21T12:05:00.000Z' };
const newKey = z.object({ key: z.string().describe('The key: shown this once, never again'), info: keyInfo });
const newKeyExample = { key: 'rk_Ab3dE9xQ0wL5mN2bV7cX4zS8aD1fG6hJ3kL9pO2iU5y', info: { ...example, last_used_at: null } };
const keyParams = accountParams.extend({ key_id: z.string().regex(/^key_[0-9a-f]{12}$/) });

export const listKeys = adminRoute({
  method: 'GET', url: '/accounts/:account/keys', tag: 'keys', operationId: 'listKeys',
  summary: 'The account\'s live API keys: id, prefix, created, last used (never a key)',
  access: { role: 'analyst', account: true },
  params: accountParams,
  success: {
    status: 200, description: 'Oldest first',
    schema: z.object({
      keys: z.array(keyInfo),
      env_keys: z.number().int().describe(
        'Keys of this account served from the environment (the `default` account only): API_KEYS, or on a development start the development key. They count towards the limit',
      ),
      development_key: z.object({
        id: z.string().meta({ example: 'key_9b1e4c7a2d05' }),
        prefix: z.string(),
        file: z.string().describe('Where it is kept: `.dev-api-key` in the service\'s working directory'),
      }).nullable().describe(
        'The development key, one of `env_keys`: made on a development start with no API_KEYS and no stored key, never in production. ' +
          'Only on the `default` account, only from the replica that serves it; null otherwise',
      ),
      max_keys: z.number().int(),
    }),
    example: { keys: [example], env_keys: 0, development_key: null, max_keys: MAX_KEYS_PER_ACCOUNT },
  },
  handler: async ({ account, services }) => {
    const info = (await services.store.accounts.get(account.id))!;
    const development = account.id === DEFAULT_ACCOUNT ? services.developmentKey ?? null : null;
    return { keys: info.keys.map(infoOf), env_keys: info.env_keys, development_key: development, max_keys: MAX_KEYS_PER_ACCOUNT };
  },
});

export const createKey = adminRoute({
  method: 'POST', url: '/accounts/:account/keys', tag: 'keys', operationId: 'createKey',
  summary: 'Make an API key; the key is in this answer only',
  access: { role: 'admin', account: true },
  params: accountParams,
  success: { status: 201, description: 'The key, once, and what is kept of it', schema: newKey, example: newKeyExample },
  problems: { 409: `The account already has ${MAX_KEYS_PER_ACCOUNT} keys: rotate or revoke one` },
  handler: async ({ account, principal, services }) => {
    const created = await services.store.accounts.createKey(account.id, { actor: principal.actor, seed: services.seed });
    await services.reloadConfiguration();
    return { key: created.key, info: infoOf(created.info) };
  },
});

export const rotateKey = adminRoute({
  method: 'POST', url: '/accounts/:account/keys/:key_id/rotate', tag: 'keys', operationId: 'rotateKey',
  summary: 'Replace one key with a new one; the other key keeps serving',
  description: 'One transaction: the replaced key is refused by this replica at once and by every other within RELOAD_INTERVAL_MS.',
  access: { role: 'admin', account: true },
  params: keyParams,
  success: {
    status: 201, description: 'The new key, once, and the key it replaced',
    schema: newKey.extend({ replaced: keyInfo }), example: { ...newKeyExample, replaced: { ...example, id: 'key_77b0e1c2d3a4', prefix: 'rk_Zt8uP1' } },
  },
  handler: async ({ account, params, principal, services }) => {
    const rotated = await services.store.accounts.rotateKey(account.id, { actor: principal.actor, keyId: params.key_id });
    await services.reloadConfiguration();
    return { key: rotated.key, info: infoOf(rotated.info), replaced: infoOf(rotated.replaced) };
  },
});

export const revokeKey = adminRoute({
  method: 'DELETE', url: '/accounts/:account/keys/:key_id', tag: 'keys', operationId: 'revokeKey',
  summary: 'Revoke a key: refused from now on',
  access: { role: 'admin', account: true },
  params: keyParams,
  success: { status: 200, description: 'The key as revoked', schema: keyInfo.extend({ revoked_at: time }), example: { ...example, revoked_at: '2026-11-22T09:00:00.000Z' } },
  handler: async ({ account, params, principal, services }) => {
    const revoked = await services.store.accounts.revokeKey(account.id, params.key_id, { actor: principal.actor });
    await services.reloadConfiguration();
    return { ...infoOf(revoked), revoked_at: iso(revoked.revoked_at!) };
  },
});

export const keyRoutes = [listKeys, createKey, rotateKey, revokeKey];
