import { getServers } from 'node:dns';
import { isIP } from 'node:net';
import { z } from 'zod';
import { DEFAULT_DATABASE_URL, parseDatabaseUrl, type DatabaseUrl } from './store-url.js';

/**
 * The whole configuration, parsed once at boot from the environment by one schema.
 * A bad value stops the start with a message naming the variable (see `ConfigError`).
 */

const integer = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const list = z
  .string()
  .transform((s) => s.split(',').map((x) => x.trim()).filter((x) => x.length > 0));

/** `ip`, `ip:port`, `[ipv6]:port` → `{ host, port }` (port 53 when absent). */
export interface DnsServer {
  host: string;
  port: number;
}

export function parseDnsServer(value: string): DnsServer | null {
  const bracketed = /^\[([^\]]+)\](?::(\d{1,5}))?$/.exec(value);
  if (bracketed) return withPort(bracketed[1]!, bracketed[2], 6);
  if (isIP(value) !== 0) return { host: value, port: 53 };
  const hostPort = /^([^:]+):(\d{1,5})$/.exec(value);
  if (hostPort) return withPort(hostPort[1]!, hostPort[2], 4);
  return null;
}

function withPort(host: string, port: string | undefined, version: 4 | 6): DnsServer | null {
  if (isIP(host) !== version) return null;
  const n = port === undefined ? 53 : Number(port);
  return n >= 1 && n <= 65535 ? { host, port: n } : null;
}

const dnsServers = list.transform((items, ctx) => {
  const servers: DnsServer[] = [];
  for (const item of items) {
    const server = parseDnsServer(item);
    if (server) servers.push(server);
    else ctx.addIssue({ code: 'custom', message: `"${item}" is not an ip[:port] address` });
  }
  return servers;
});

const cidr = (value: string): boolean => {
  const [address, bits, ...rest] = value.split('/');
  const version = isIP(address ?? '');
  if (version === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const n = Number(bits);
  // A /0 trusts every source, which is the blanket `true` this setting exists to avoid.
  return /^\d{1,3}$/.test(bits) && n >= 1 && n <= (version === 4 ? 32 : 128);
};

/** Where the identity provider sends the browser back (OIDC_REDIRECT_URL's path). */
export const OIDC_CALLBACK_PATH = '/admin/v1/oidc/callback';

const httpUrl = z.string().transform((value, ctx) => {
  const url = URL.parse(value);
  if (url === null || (url.protocol !== 'https:' && url.protocol !== 'http:') || url.search !== '' || url.hash !== '' || url.username !== '') {
    ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL without query, fragment or credentials' });
    return z.NEVER;
  }
  return url;
});

/** RFC 6750 §2.1 b64token: what an `Authorization: Bearer` header can carry. */
const bearerToken = z
  .string()
  .regex(/^[A-Za-z0-9\-._~+/]+=*$/, 'must be letters, digits and - . _ ~ + / only (then = padding): a Bearer header cannot carry anything else')
  .min(32, 'must be at least 32 characters (e.g. openssl rand -base64 32)');

const databaseUrl = z.string().transform((value, ctx) => {
  const parsed = parseDatabaseUrl(value);
  if ('error' in parsed) {
    ctx.addIssue({ code: 'custom', message: parsed.error });
    return z.NEVER;
  }
  return parsed;
});

export const envSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  PORT: integer(0, 65535).default(3000),
  HOST: z.string().min(1).default('0.0.0.0'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  API_KEYS: list.default([]),
  ACCOUNTS_FILE: z.string().min(1).optional(),
  DATA_DIR: z.string().min(1).default('./data'),
  RULES_DIR: z.string().min(1).default('./rules'),
  /** Empty means: the system's resolvers (read by the server entry, not here). */
  DNS_SERVERS: dnsServers.default([]),
  DNS_TIMEOUT_MS: integer(50, 30_000).default(1500),
  TRUST_PROXY: list
    .refine((items) => items.every(cidr), { message: 'must be a comma-separated list of IP addresses or CIDRs' })
    .default([]),
  RATE_LIMIT_MAX: integer(0, 10_000_000).default(1000),
  RATE_LIMIT_WINDOW_MS: integer(100, 3_600_000).default(1000),
  BODY_LIMIT_BYTES: integer(1024, 10_485_760).default(32_768),
  KEEP_ALIVE_TIMEOUT_MS: integer(1000, 600_000).default(72_000),
  REQUEST_TIMEOUT_MS: integer(1000, 600_000).default(10_000),
  SHUTDOWN_GRACE_MS: integer(0, 600_000).default(10_000),
  SHUTDOWN_DELAY_MS: integer(0, 600_000).default(0),
  RELOAD_INTERVAL_MS: integer(100, 600_000).default(1000),
  BACKTEST_CPU_PERCENT: integer(1, 100).default(50),
  WEBHOOK_ALLOW_PRIVATE: z.enum(['true', 'false'], { message: 'must be true or false' }).default('false'),
  WEBHOOK_SECRET_KEY: z.string().min(32, 'must be at least 32 characters (e.g. openssl rand -base64 32)').optional(),
  DATABASE_URL: databaseUrl.prefault(DEFAULT_DATABASE_URL),
  RETENTION_DAYS: integer(0, 3650).default(30),
  METRICS_PORT: integer(1, 65535).optional(),
  METRICS_HOST: z.string().min(1).optional(),
  METRICS_TOKEN: bearerToken.optional(),
  HISTORY_DAYS: integer(0, 3650).default(180),
  HISTORY_TIMEOUT_MS: integer(1, 10_000).default(200),
  SESSION_IDLE_TIMEOUT_MS: integer(60_000, 7 * 86_400_000).default(30 * 60_000),
  SESSION_MAX_AGE_MS: integer(60_000, 30 * 86_400_000).default(12 * 3_600_000),
  TWO_FACTOR_REQUIRED: z.enum(['true', 'false']).default('false'),
  OIDC_ISSUER: httpUrl.optional(),
  OIDC_CLIENT_ID: z.string().min(1).max(512).optional(),
  OIDC_CLIENT_SECRET: z.string().min(1).max(1024).optional(),
  OIDC_REDIRECT_URL: httpUrl
    .refine((url) => url.pathname === OIDC_CALLBACK_PATH, { message: `must be the service's public origin followed by ${OIDC_CALLBACK_PATH}` })
    .optional(),
  OIDC_SCOPES: z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+( [\x21\x23-\x5B\x5D-\x7E]+)*$/, 'must be scopes separated by single spaces')
    .refine((scopes) => scopes.split(' ').includes('openid'), { message: 'must include openid' })
    .default('openid email profile'),
  OIDC_EMAIL_CLAIM: z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be a claim name').default('email'),
  OIDC_NAME: z.string().trim().min(1).max(40).default('single sign-on'),
  PASSWORD_LOGIN: z.enum(['true', 'false'], { message: 'must be true or false' }).default('true'),
});

export type Env = z.input<typeof envSchema>;

export interface Config {
  env: 'development' | 'production' | 'test';
  port: number;
  host: string;
  logLevel: string;
  apiKeys: string[];
  /** An accounts file from before the store, imported once at start (README "Keys and accounts"). */
  accountsFile: string | undefined;
  dataDir: string;
  rulesDir: string;
  /** Resolved list: never empty once the server entry has filled in the system's resolvers. */
  dnsServers: DnsServer[];
  dnsTimeoutMs: number;
  trustProxy: string[];
  rateLimit: { max: number; windowMs: number };
  /** Webhooks may be sent to private, loopback and link-local addresses (development, tests). */
  webhookAllowPrivate: boolean;
  /** Webhook signing secrets are sealed at rest under a key derived from it; stored as they are without it (development). */
  webhookSecretKey: string | undefined;
  bodyLimitBytes: number;
  keepAliveTimeoutMs: number;
  requestTimeoutMs: number;
  shutdownGraceMs: number;
  /** After SIGTERM, how long the service stays up not-ready (answering, with `Connection: close`) before it drains. */
  shutdownDelayMs: number;
  /** How often data files are checked for changes, and the store for changed keys and rule sets. */
  reloadIntervalMs: number;
  /** The share of wall-clock time (per cent) a backtest's replay works, pausing between pages for the rest. */
  backtestCpuPercent: number;
  database: DatabaseUrl;
  /** Days the evaluation log keeps an evaluation; 0 keeps none. */
  retentionDays: number;
  metrics: MetricsConfig;
  /** Days behaviour history keeps an identifier after its last event; 0 keeps no history. */
  historyDays: number;
  /** How long an evaluation waits for the store's history step before answering without it. */
  historyTimeoutMs: number;
  /** Console sessions: ended after this long unused, and this long after login whatever happens. */
  session: { idleTimeoutMs: number; maxAgeMs: number; twoFactorRequired: boolean };
  /** How console users sign in: passwords (PASSWORD_LOGIN), and an OpenID Connect provider when OIDC_ISSUER is set. */
  signIn: { passwords: boolean; oidc: OidcSettings | null };
}

/** The OpenID Connect provider console users sign in with (README "Single sign-on"). */
export interface OidcSettings {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  redirectUrl: URL;
  scopes: string;
  /** The claim whose value is matched to a console user's e-mail address. */
  emailClaim: string;
  /** Shown on the console's button: "Sign in with …". */
  name: string;
}

/**
 * Where Prometheus scrapes `/metrics` (docs/operations.md "Metrics"): on a listener of its own when `port` is
 * set, else on the service's port when `token` is set; nowhere (and nothing recorded) with neither.
 * A token, when set, is required wherever `/metrics` is served.
 */
export interface MetricsConfig {
  enabled: boolean;
  port: number | null;
  host: string;
  token: string | null;
}

export const DEFAULT_METRICS_HOST = '127.0.0.1';

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses the environment. Throws `ConfigError` naming every bad variable. */
export function loadConfig(env: Record<string, string | undefined>): Config {
  // An empty variable is an unset one: `PORT=` in a .env file means "use the default".
  const present = Object.fromEntries(
    Object.keys(envSchema.shape).flatMap((k) => (env[k] !== undefined && env[k] !== '' ? [[k, env[k]]] : [])),
  );
  const parsed = envSchema.safeParse(present);
  if (!parsed.success) {
    throw new ConfigError(parsed.error.issues.map((i) => `${String(i.path[0])}: ${i.message}`));
  }
  const e = parsed.data;
  const problems: string[] = [];
  if (e.METRICS_HOST !== undefined && e.METRICS_PORT === undefined) problems.push('METRICS_HOST: has no effect without METRICS_PORT');
  if (e.METRICS_PORT !== undefined && e.METRICS_PORT === e.PORT) problems.push(`METRICS_PORT: must differ from PORT (${e.PORT})`);
  const oidcSet = (['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET', 'OIDC_REDIRECT_URL'] as const).filter((k) => e[k] !== undefined);
  if (oidcSet.length > 0 && oidcSet.length < 4) problems.push(`OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET and OIDC_REDIRECT_URL go together: ${oidcSet.join(', ')} set without the others`);
  if (e.PASSWORD_LOGIN === 'false' && oidcSet.length === 0) problems.push('PASSWORD_LOGIN: can be false only with single sign-on configured (OIDC_ISSUER and the rest): nobody could log in');
  if (problems.length > 0) throw new ConfigError(problems);
  const oidc: OidcSettings | null = oidcSet.length === 4
    ? { issuer: e.OIDC_ISSUER!, clientId: e.OIDC_CLIENT_ID!, clientSecret: e.OIDC_CLIENT_SECRET!, redirectUrl: e.OIDC_REDIRECT_URL!, scopes: e.OIDC_SCOPES, emailClaim: e.OIDC_EMAIL_CLAIM, name: e.OIDC_NAME }
    : null;
  return {
    env: e.NODE_ENV,
    port: e.PORT,
    host: e.HOST,
    logLevel: e.LOG_LEVEL,
    apiKeys: e.API_KEYS,
    accountsFile: e.ACCOUNTS_FILE,
    dataDir: e.DATA_DIR,
    rulesDir: e.RULES_DIR,
    dnsServers: e.DNS_SERVERS,
    dnsTimeoutMs: e.DNS_TIMEOUT_MS,
    trustProxy: e.TRUST_PROXY,
    rateLimit: { max: e.RATE_LIMIT_MAX, windowMs: e.RATE_LIMIT_WINDOW_MS },
    webhookAllowPrivate: e.WEBHOOK_ALLOW_PRIVATE === 'true',
    webhookSecretKey: e.WEBHOOK_SECRET_KEY,
    bodyLimitBytes: e.BODY_LIMIT_BYTES,
    keepAliveTimeoutMs: e.KEEP_ALIVE_TIMEOUT_MS,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    reloadIntervalMs: e.RELOAD_INTERVAL_MS,
    backtestCpuPercent: e.BACKTEST_CPU_PERCENT,
    database: e.DATABASE_URL,
    retentionDays: e.RETENTION_DAYS,
    metrics: {
      enabled: e.METRICS_PORT !== undefined || e.METRICS_TOKEN !== undefined,
      port: e.METRICS_PORT ?? null,
      host: e.METRICS_HOST ?? DEFAULT_METRICS_HOST,
      token: e.METRICS_TOKEN ?? null,
    },
    historyDays: e.HISTORY_DAYS,
    historyTimeoutMs: e.HISTORY_TIMEOUT_MS,
    session: { idleTimeoutMs: e.SESSION_IDLE_TIMEOUT_MS, maxAgeMs: e.SESSION_MAX_AGE_MS, twoFactorRequired: e.TWO_FACTOR_REQUIRED === 'true' },
    signIn: { passwords: e.PASSWORD_LOGIN === 'true', oidc },
  };
}

/**
 * The config with DNS_SERVERS, or, when that is empty, the system's resolvers (resolv.conf, as
 * node:dns reads it). Every process that evaluates (the server, the demo) starts through this.
 */
export function withSystemResolvers(config: Config): Config {
  if (config.dnsServers.length > 0) return config;
  return { ...config, dnsServers: getServers().flatMap((s) => parseDnsServer(s) ?? []) };
}
