import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from './config/config.js';
import { registerAdminApi } from './admin/index.js';
import { BacktestJobs } from './backtest/jobs.js';
import { createSetupToken } from './admin/setup.js';
import { fetchedSourceStatus } from './data-update/status.js';
import { createEmailInspector } from './email/index.js';
import { createEnricher, createEvaluator, STORE_CHECK, type Evaluator } from './evaluation/evaluate.js';
import type { SourceStatus } from './core/ports.js';
import type { EmailInspector } from './email/facts.js';
import type { IpInspector } from './ip/facts.js';
import type { Resource } from './core/ports.js';
import type { RuleBook } from './rules/ports.js';
import { registerAuthentication } from './http/auth.js';
import { SingleSignOn } from './admin/oidc.js';
import { registerConsole } from './http/routes/console.js';
import { clientErrorHandler, frameworkErrorHandler, registerErrorHandling } from './http/error-handler.js';
import { buildOpenApiDocument } from './openapi.js';
import { acceptJsonOnly } from './http/json-body.js';
import { registerRateLimit } from './http/rate-limit.js';
import { requestIdFor } from './http/request-id.js';
import { OneLinePerRequest } from './http/request-log.js';
import { setCommonHeaders } from './http/response-headers.js';
import { registerEraseRoute } from './http/routes/erase.js';
import { registerEvaluateRoute } from './http/routes/evaluate.js';
import { startWebhookWorker, type WebhookWorker } from './webhooks/worker.js';
import { registerEvaluationRoute } from './http/routes/evaluation.js';
import { registerFeedbackRoute } from './http/routes/feedback.js';
import { registerHealthRoutes } from './http/routes/health.js';
import { registerSdkRoutes } from './http/routes/sdk.js';
import { httpServerTimeouts } from './http/timeouts.js';
import { createHistoryRecorder } from './history/recorder.js';
import { createIpInspector } from './ip/index.js';
import { createListBook } from './lists/list-book.js';
import { importAccountsFileOnce } from './store/accounts-import.js';
import { checkApiKeys, createKeyStore, KeyConfigError, type KeyStore } from './keys/key-store.js';
import { hashKey, keyIdOf, keyPrefixOf, type DevelopmentKeyInfo } from './keys/key.js';
import { createMetrics, type Metrics } from './metrics/metrics.js';
import { registerMetricsRoute, registerRequestMetrics } from './metrics/routes.js';
import { createRuleBook } from './rules/rule-book.js';
import { readRuleFiles } from './rules/templates.js';
import { openStore, type Store } from './store/index.js';
import { startSync } from './store/sync.js';
import { version } from './version.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Provenance of every key, rule and data source: file, type, build date, entries, last refusal. */
    sources(): SourceStatus[];
    /** The store: accounts, keys, rule set versions, the evaluation log, the audit log. */
    store: Store;
    /** Sends the queued webhook deliveries (src/webhooks/worker.ts); `tick()` runs a pass now. */
    webhooks: WebhookWorker;
    /** Reads the store's changes now instead of at the next poll (tests, a signal handler). */
    reloadConfiguration(): Promise<void>;
    /** The Prometheus metrics; null unless METRICS_PORT or METRICS_TOKEN is set (server.ts serves them). */
    metrics: Metrics | null;
    /**
     * The drain's first step (server.ts, on SIGTERM): readiness answers 503 and every response says
     * `Connection: close`, while requests are still served. `close()` does it too, if not done yet.
     */
    stopAccepting(): void;
  }
}

/** Re-exported for the scripts and tests that read it from here. */
export { version };

/** Long-lived resources; tests may pass their own, production builds them from the config. */
export interface AppResources {
  keys: KeyStore;
  email: EmailInspector;
  ip: IpInspector;
  rules: RuleBook;
}

export interface BuildOptions {
  logger: Logger;
  resources?: Partial<AppResources>;
  /**
   * Outside production, a key for a fresh install that has none (server.ts keeps it in a file):
   * called only when neither API_KEYS nor the store has a key.
   */
  developmentKey?: () => string;
  /**
   * Where server.ts keeps the development key (`.dev-api-key`), and the key when it already serves
   * it from there through `config.apiKeys`: the admin API lists that key as the development key
   * (`development_key`), telling it apart from API_KEYS.
   */
  developmentKeyFile?: { file: string; key: string | null };
  /**
   * Outside production, while no console user exists: receives the one-time token of the first
   * owner's setup (server.ts prints the link to the terminal; it never goes to the log).
   */
  onSetupToken?: (token: string) => void;
  /** The clock evaluations, history windows and the admin API (sessions, their expiry, login throttling) run on; tests move it instead of waiting. */
  now?: () => number;
  /** The webhook worker's deadline per attempt (5 s unless given: tests of a slow receiver). */
  webhookDeadlineMs?: number;
}

/**
 * The store first: migrated, `ACCOUNTS_FILE` imported once, `API_KEYS`' account ensured. Then keys
 * and rule sets from it into memory, kept current by polling its change counter. RULES_DIR is
 * validated at every start (it is what a new account starts from): a bad file stops the start.
 */
async function createStoreResources(config: Config, logger: Logger, options: BuildOptions, metrics: Metrics | null) {
  checkApiKeys(config.apiKeys);
  const templates = { files: await readRuleFiles(config.rulesDir), comment: 'seeded from RULES_DIR' };
  const observe = metrics?.storeOperation;
  const store = await openStore({ database: config.database, logger, retentionDays: config.retentionDays, historyDays: config.historyDays, historyTimeoutMs: config.historyTimeoutMs, writeLog: true, observe, now: options.now, webhookSecretKey: config.webhookSecretKey });
  try {
    if (config.accountsFile !== undefined) await importAccountsFileOnce(store, config.accountsFile, { templates: templates.files, logger });
    let apiKeys = config.apiKeys;
    let made: string | null = null;
    if (apiKeys.length === 0 && !(await store.accounts.anyLiveKey())) {
      if (options.developmentKey === undefined) {
        throw new KeyConfigError('no API keys: set API_KEYS, or create one in the store with "npm run keys -- create --account NAME"');
      }
      made = options.developmentKey();
      apiKeys = [made];
    }
    const developmentKey = developmentKeyOf(apiKeys, made ?? options.developmentKeyFile?.key ?? null, options.developmentKeyFile?.file);
    await store.accounts.useEnvironmentKeys(apiKeys.length, templates);
    const snapshot = await store.snapshot();
    const keys = createKeyStore({ apiKeys, logger, touch: (uses) => store.accounts.touch(uses) });
    keys.replace(snapshot);
    const rules = createRuleBook(snapshot, { logger });
    const lists = createListBook(snapshot.lists);
    const sync = startSync({
      engine: store.engine, health: store.health, logger, intervalMs: config.reloadIntervalMs,
      compiled: rules.compiled,
      observe,
      apply: (next) => {
        keys.replace(next);
        rules.replace(next);
        lists.replace(next.lists);
      },
    }, snapshot);
    return { store, keys, rules, lists, sync, templates, developmentKey };
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * The development key, when it is among the keys served from the environment: the one server.ts
 * already reads from its file, or the one it has just made. Only its id, prefix and file leave here.
 */
function developmentKeyOf(apiKeys: string[], key: string | null, file: string | undefined): DevelopmentKeyInfo | null {
  if (key === null || file === undefined || !apiKeys.includes(key)) return null;
  return { id: keyIdOf(hashKey(key)), prefix: keyPrefixOf(key), file };
}

async function createResources(config: Config, logger: Logger, options: BuildOptions, metrics: Metrics | null) {
  const given = options.resources ?? {};
  const stored = await createStoreResources(config, logger, options, metrics);
  try {
    const [intelligence, ip] = await Promise.all([
      given.email === undefined ? createEmailInspector({ config, logger }) : null,
      given.ip ?? createIpInspector({ config, logger }),
    ]);
    const email = given.email ?? intelligence!;
    const resources: AppResources = { keys: given.keys ?? stored.keys, rules: given.rules ?? stored.rules, email, ip };
    return { resources, resolver: intelligence?.resolver ?? null, ...stored };
  } catch (error) {
    stored.sync.close();
    await stored.store.close();
    throw error;
  }
}

/**
 * Builds the whole service from a validated config and returns it ready, listening on nothing.
 * Rules, keys and data are loaded before it resolves; they are closed with the app.
 */
export async function buildApp(config: Config, options: BuildOptions): Promise<FastifyInstance> {
  // Off unless there is somewhere to scrape it: then nothing is recorded on the request path either.
  const metrics = config.metrics.enabled ? createMetrics({ version }) : null;
  const { resources, resolver, store, keys, lists, sync, templates, developmentKey } = await createResources(config, options.logger, options, metrics);
  const now = options.now ?? Date.now;
  const backtests = new BacktestJobs(store.engine, { logger: options.logger.child({ component: 'backtest' }), now, dutyCycle: config.backtestCpuPercent / 100 });
  if (config.env !== 'production' && options.onSetupToken !== undefined) {
    const token = await createSetupToken(store, now());
    if (token !== undefined) {
      options.logger.warn('no console user yet: a one-time setup link for the first owner was printed to the terminal (README "Administration")');
      options.onSetupToken(token);
    }
  }
  let accepting = true;
  let sweep: NodeJS.Timeout | undefined;

  const app = Fastify({
    loggerInstance: options.logger as FastifyBaseLogger,
    // X-Request-Id when sane, else a UUID; on the request's log line as `request_id`.
    genReqId: requestIdFor,
    logController: new OneLinePerRequest({ requestIdLogLabel: 'request_id' }),
    trustProxy: config.trustProxy.length > 0 ? config.trustProxy : false,
    bodyLimit: config.bodyLimitBytes,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.requestTimeoutMs,
    // Requests arriving on open connections during the drain are still served, not refused.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // Errors raised before a route runs, and by the HTTP parser, are problems too.
    frameworkErrors: frameworkErrorHandler(config.bodyLimitBytes),
    clientErrorHandler,
    // Host (missing, repeated or malformed) is checked by registerErrorHandling, which answers a
    // problem rather than Node's empty 400. The timeouts make REQUEST_TIMEOUT_MS hold for headers
    // and body alike (see timeouts.ts).
    http: { requireHostHeader: false, ...httpServerTimeouts(config.requestTimeoutMs) },
  });

  app.decorateRequest('account', null);
  registerErrorHandling(app, config.bodyLimitBytes);
  app.addHook('onClose', async () => {
    clearInterval(sweep);
    sync.close();
    // Before the store closes: a backtest stopped by the shutdown is recorded as cancelled.
    await backtests.close();
    await webhooks.close();
    await Promise.all([...new Set<Resource>([...Object.values(resources), keys])].map((r) => r.close()));
    // Last: the evaluation log sends what is still queued.
    await store.close();
  });

  const fetched = fetchedSourceStatus(config.dataDir);
  const sources = () => [store.status(), ...resources.keys.status(), ...resources.rules.status(), ...resources.email.status(), ...resources.ip.status(), ...fetched()];
  app.decorate('sources', sources);
  app.decorate('store', store);
  const webhooks = startWebhookWorker({ store, logger: app.log, allowPrivate: config.webhookAllowPrivate, now: options.now, deadlineMs: options.webhookDeadlineMs });
  if (config.env === 'production' && config.webhookSecretKey === undefined && (await store.webhookEndpoints.anyUnsealed())) {
    app.log.warn('WEBHOOK_SECRET_KEY is not set: webhook signing secrets are stored unsealed (README "Webhooks")');
  }
  app.decorate('webhooks', webhooks);
  app.decorate('reloadConfiguration', () => sync.check());
  app.decorate('metrics', metrics);
  app.decorate('stopAccepting', () => {
    accepting = false;
  });
  if (metrics !== null) {
    metrics.attach({ sources, log: () => store.log.stats(), history: () => store.history?.stats() ?? null, storeAvailable: () => store.health.available, resolver });
    registerRequestMetrics(app, metrics);
    // Without a listener of its own, /metrics is on this port, and only with the token.
    if (config.metrics.port === null && config.metrics.token !== null) registerMetricsRoute(app, metrics, config.metrics.token);
  }
  registerHealthRoutes(app, { accepting: () => accepting, unavailable: () => (store.health.available ? [] : [STORE_CHECK]) });
  const openapi = buildOpenApiDocument(version);
  app.get('/openapi.json', async () => openapi);
  registerSdkRoutes(app);
  await registerConsole(app);

  const history = store.history === null ? null : createHistoryRecorder({
    store: store.history,
    hash: store.hashIdentifier,
    local: store.localCounts,
    available: () => store.health.available,
    timeoutMs: config.historyTimeoutMs,
    onError: (error) => store.health.down(error),
  });
  const enrichment = {
    store: store.health,
    history,
    lists,
    now: options.now,
    deadlineMs: config.dnsTimeoutMs,
    onStepError: (step: string, error: unknown) => app.log.error({ step, err: error }, 'enrichment step failed'),
  };
  await app.register(async (v1) => {
    // Answers under /v1 carry personal data (the e-mail and IP address evaluated): no cache may keep them.
    v1.addHook('onSend', (_request, reply, payload, done) => {
      reply.header('cache-control', 'no-store');
      done(null, payload);
    });
    acceptJsonOnly(v1);
    await registerAuthentication(v1, resources.keys);
    registerRateLimit(v1, config.rateLimit);
    const evaluator = createEvaluator({ ...resources, ...enrichment });
    const evaluate = metrics === null ? evaluator : countedEvaluations(evaluator, metrics);
    registerEvaluateRoute(v1, { evaluate, rules: resources.rules, log: store.log });
    registerEvaluationRoute(v1, store);
    registerFeedbackRoute(v1, store);
    registerEraseRoute(v1, store);
  });

  await registerAdminApi(app, {
    store, config, seed: templates, sources, sessions: { ...config.session, passwordLogin: config.signIn.passwords }, now, backtests, developmentKey, webhooks,
    singleSignOn: config.signIn.oidc ? new SingleSignOn(config.signIn.oidc, options.logger.child({ component: 'sso' })) : undefined,
    reloadConfiguration: () => sync.check(),
    enrich: createEnricher({ ...resources, ...enrichment }),
  });

  app.addHook('preClose', async () => {
    accepting = false;
    // Connections busy when the drain starts go idle once their response is sent; Node closes only
    // those idle at close() time, so a keep-alive client would hold the process until its timeout.
    sweep = setInterval(() => app.server.closeIdleConnections(), 25).unref();
  });
  // A response sent during the drain says so: without `Connection: close` the client reuses the
  // connection, the sweep closes it, and the client's next POST is reset after it was sent, which
  // neither it nor a load balancer may safely retry. Fastify marks only requests that arrive
  // after the close began; this covers those already in flight.
  // Every response also names its request (echoed or generated) and forbids content sniffing.
  // A callback hook, not an async one: no promise per response on the hot path.
  app.addHook('onSend', (_request, reply, payload, done) => {
    setCommonHeaders(reply);
    if (!accepting) reply.header('connection', 'close');
    done(null, payload);
  });
  return app;
}

/** The evaluator, each answer counted (event type, state, rules fired, checks unavailable) as it returns. */
function countedEvaluations(evaluate: Evaluator, metrics: Metrics): Evaluator {
  return async (request, account) => {
    const evaluation = await evaluate(request, account);
    if (evaluation !== undefined) metrics.evaluated(evaluation);
    return evaluation;
  };
}
