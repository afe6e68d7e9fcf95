import { z } from 'zod';
import { version } from '../../version.js';
import type { SourceStatus } from '../../core/ports.js';
import { adminRoute } from '../route.js';

/**
 * What `/readyz` no longer shows publicly (src/http/routes/health.ts): the data sources with their
 * files, build dates, entry counts and last refusal; and, for owners, the store (engine, where, the
 * evaluation log's counters), keys and rule sets across the instance, and the process's figures.
 * Members see the data sources only: those are shared by every account and say nothing of any.
 */
const source = z.object({
  name: z.string().meta({ example: 'ip.city' }),
  source: z.string().nullable(),
  type: z.string(),
  loaded: z.boolean(),
  build_date: z.string().nullable(),
  entries: z.number().nullable(),
  error: z.string().nullable(),
});
const sourceExample = { name: 'ip.city', source: 'data/GeoLite2-City.mmdb', type: 'GeoLite2-City', loaded: true, build_date: '2026-11-18T00:00:00.000Z', entries: 3401237, error: null };
const ACCOUNT_NEUTRAL = /^(email|ip)\./;

export const listSources = adminRoute({
  method: 'GET', url: '/sources', tag: 'health', operationId: 'listSources',
  summary: 'The data sources every evaluation reads: loaded or not, file, build date, entries, last refusal',
  access: { role: 'signed-in' },
  success: { status: 200, description: 'By name', schema: z.object({ sources: z.array(source) }), example: { sources: [sourceExample] } },
  handler: async ({ services }) => ({ sources: services.sources().filter((s) => ACCOUNT_NEUTRAL.test(s.name)).map(pick) }),
});

const pick = (s: SourceStatus): z.output<typeof source> => ({ name: s.name, source: s.source, type: s.type, loaded: s.loaded, build_date: s.build_date, entries: s.entries, error: s.error });

const logCounters = z.object({
  enabled: z.boolean(), queued: z.number(), queued_bytes: z.number(), written: z.number(), dropped: z.number(), failed: z.number(), pruned: z.number(),
});

export const getHealth = adminRoute({
  method: 'GET', url: '/health', tag: 'health', operationId: 'getHealth',
  summary: 'The instance\'s health: store, evaluation log counters, every source, the process',
  access: { role: 'owner' },
  success: {
    status: 200, description: 'As of now',
    schema: z.object({
      version: z.string(),
      node: z.string(),
      uptime_s: z.number(),
      memory: z.object({ rss_bytes: z.number(), heap_used_bytes: z.number(), heap_total_bytes: z.number(), external_bytes: z.number() }),
      store: z.object({ engine: z.string(), source: z.string().nullable(), available: z.boolean(), error: z.string().nullable(), schema_version: z.number(), log: logCounters }),
      sources: z.array(source),
    }),
    example: {
      version: '0.1.0', node: 'v24.21.0', uptime_s: 3600,
      memory: { rss_bytes: 201326592, heap_used_bytes: 98566144, heap_total_bytes: 134217728, external_bytes: 4194304 },
      store: { engine: 'sqlite', source: 'sqlite:./var/risk.sqlite', available: true, error: null, schema_version: 5, log: { enabled: true, queued: 0, queued_bytes: 0, written: 10233, dropped: 0, failed: 0, pruned: 0 } },
      sources: [sourceExample, { name: 'keys.store', source: 'store', type: 'keys', loaded: true, build_date: null, entries: 3, error: null }],
    },
  },
  handler: async ({ services }) => {
    const { store } = services;
    const status = store.status();
    const memory = process.memoryUsage();
    return {
      version,
      node: process.version,
      uptime_s: Math.round(process.uptime()),
      memory: { rss_bytes: memory.rss, heap_used_bytes: memory.heapUsed, heap_total_bytes: memory.heapTotal, external_bytes: memory.external },
      store: { engine: status.type, source: status.source, available: status.loaded, error: status.error, schema_version: store.migration.to, log: status.log },
      sources: services.sources().filter((s) => s.name !== 'store').map(pick),
    };
  },
});

export const healthRoutes = [listSources, getHealth];
