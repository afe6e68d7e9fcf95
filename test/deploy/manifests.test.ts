import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/config.js';
import { startTestApp, type TestApp } from '../support/app.js';

/**
 * The deployment examples, checked where no Docker engine or cluster runs: every file parses, every
 * variable they set is one the service or the data job reads (.env.example lists them all) and the
 * replicas' environment is a configuration the service accepts, probes and health checks name routes
 * the real app answers, selectors and Secret references line up, the drain fits the grace periods,
 * and the commands exist in the image's layout. Their topology itself runs in nginx-replicas.test.ts.
 */

type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const read = (path: string): Doc[] => parseAllDocuments(readFileSync(path, 'utf8')).map((d) => {
  if (d.errors.length > 0) throw new Error(`${path}: ${d.errors[0]!.message}`);
  return d.toJS({ maxAliasCount: 100 }) as Doc;
});
const K8S = 'deploy/kubernetes';
const manifests = readdirSync(K8S).filter((f) => f.endsWith('.yaml')).flatMap((f) => read(join(K8S, f)).map((doc) => ({ file: f, doc })));
const kind = (k: string) => manifests.filter((m) => m.doc.kind === k).map((m) => m.doc);
const [deployment] = kind('Deployment');
const [cronJob] = kind('CronJob');
const [secret] = kind('Secret');
const pod = deployment!.spec.template.spec;
const container = pod.containers[0];
const compose = read('deploy/compose.yaml')[0]!;
const documented = new Set([...readFileSync('.env.example', 'utf8').matchAll(/^([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]!));

/** `${NAME:?message}` and `${NAME:-default}` as compose would fill them from deploy/.env. */
const interpolate = (value: string, env: Record<string, string>) =>
  value.replace(/\$\{(\w+)(?::[?-][^}]*)?\}/g, (_, name: string) => env[name] ?? '');
const composeVariables = { POSTGRES_PASSWORD: 'secret', METRICS_TOKEN: 'a-metrics-token-of-at-least-32-characters', API_KEYS: '' };
const envOf = (list: Array<{ name: string; value?: string }>) => Object.fromEntries(list.filter((e) => e.value !== undefined).map((e) => [e.name, e.value!]));
const seconds = (ms: string | undefined) => Number(ms ?? 0) / 1000;

let t: TestApp | undefined;
afterAll(async () => {
  await t?.app.close();
});

describe('the deployment examples', () => {
  it('set only variables the service or the data job reads', () => {
    const names = [
      ...pod.containers.flatMap((c: Doc) => c.env.map((e: Doc) => e.name)),
      ...cronJob!.spec.jobTemplate.spec.template.spec.containers.flatMap((c: Doc) => c.env.map((e: Doc) => e.name)),
      ...Object.values(compose.services).flatMap((s) => Object.keys((s as Doc).environment ?? {})),
    ];
    const known = new Set([...documented, 'POSTGRES_USER', 'POSTGRES_DB', 'POSTGRES_PASSWORD']);
    expect(names.filter((name) => !known.has(name))).toEqual([]);
  });

  it('configure replicas the service accepts, on the port nginx and the probes use', () => {
    for (const name of ['risk-1', 'risk-2']) {
      const env = Object.fromEntries(Object.entries(compose.services[name].environment as Record<string, string>).map(([k, v]) => [k, interpolate(String(v), composeVariables)]));
      const config = loadConfig(env);
      expect(config.metrics).toMatchObject({ port: 9464, host: '0.0.0.0' });
      expect(config.database.engine).toBe('postgres');
      expect(compose.services[name].ports).toBeUndefined();
      // Docker waits stop_grace_period after SIGTERM: the delay and the drain must fit in it.
      expect(Number(String(compose.services[name].stop_grace_period).replace('s', ''))).toBeGreaterThan(seconds(env.SHUTDOWN_DELAY_MS) + seconds(env.SHUTDOWN_GRACE_MS));
      expect(readFileSync('deploy/nginx.conf', 'utf8')).toContain(`server ${name}:${config.port} `);
      // nginx's address in the compose network is trusted for X-Forwarded-For.
      expect(config.trustProxy).toEqual([compose.networks.default.ipam.config[0].subnet]);
    }
    const k8s = loadConfig({ ...envOf(container.env), DATABASE_URL: 'postgres://risk@postgres:5432/risk', METRICS_TOKEN: composeVariables.METRICS_TOKEN });
    expect(container.ports.find((p: Doc) => p.name === 'http').containerPort).toBe(k8s.port);
    expect(container.ports.find((p: Doc) => p.name === 'metrics').containerPort).toBe(k8s.metrics.port);
    // The kubelet waits terminationGracePeriodSeconds from the preStop's start: the pause and the drain must fit.
    const pause = Number(container.lifecycle.preStop.exec.command[1]);
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(pause + k8s.shutdownDelayMs / 1000 + k8s.shutdownGraceMs / 1000);
  });

  it('probe and health-check routes the real app answers', async () => {
    t = await startTestApp();
    const paths = [
      container.readinessProbe.httpGet.path, container.livenessProbe.httpGet.path, container.startupProbe.httpGet.path,
      /\/readyz/.exec(readFileSync('Dockerfile', 'utf8'))![0],
    ];
    for (const path of paths) expect((await t.app.inject(path)).statusCode, path).toBe(200);
  });

  it('line up selectors, Secret references, volumes and the kustomization', () => {
    const labels = deployment!.spec.template.metadata.labels;
    for (const selector of [deployment!.spec.selector.matchLabels, ...kind('PodDisruptionBudget').map((p) => p.spec.selector.matchLabels), ...kind('Service').map((s) => s.spec.selector)]) {
      expect(labels).toMatchObject(selector);
    }
    expect(kind('Service')[0]!.spec.ports.map((p: Doc) => p.targetPort)).toEqual(['http']);
    const refs = [...pod.containers, ...cronJob!.spec.jobTemplate.spec.template.spec.containers].flatMap((c: Doc) => c.env.map((e: Doc) => e.valueFrom?.secretKeyRef).filter(Boolean));
    expect(refs.length).toBeGreaterThan(3);
    for (const ref of refs) {
      expect(ref.name).toBe(secret!.metadata.name);
      expect(Object.keys(secret!.stringData)).toContain(ref.key);
    }
    const claims = new Set(kind('PersistentVolumeClaim').map((c) => c.metadata.name));
    for (const spec of [pod, cronJob!.spec.jobTemplate.spec.template.spec]) {
      for (const volume of spec.volumes.filter((v: Doc) => v.persistentVolumeClaim)) expect(claims).toContain(volume.persistentVolumeClaim.claimName);
    }
    const kustomization = read(join(K8S, 'kustomization.yaml'))[0]!;
    expect(kustomization.resources.sort()).toEqual(manifests.filter((m) => m.doc.kind !== 'Kustomization' && m.doc.kind !== 'Secret').map((m) => m.file).sort());
  });

  it('run the data job as the image has it, in the CronJob and in compose alike', () => {
    const command = cronJob!.spec.jobTemplate.spec.template.spec.containers[0].command as string[];
    expect(command).toEqual(['node', 'dist/cli/data-update.js']);
    // dist/ is src/ compiled (tsconfig.build.json: rootDir src, outDir dist).
    expect(existsSync(command[1]!.replace(/^dist\//, 'src/').replace(/\.js$/, '.ts'))).toBe(true);
    expect(compose.services['data-update'].entrypoint.join(' ')).toContain(command.join(' '));
    expect(compose.services['data-update'].volumes).toEqual(['data:/data']);
    expect(compose.services['risk-1'].volumes).toEqual(['data:/data:ro']);
  });

  it('name only files that exist, and only paths in a Secret that something mounts', () => {
    const hostFiles = Object.values(compose.services).flatMap((service) => ((service as Doc).volumes ?? []) as string[])
      .map((volume) => volume.split(':')[0]!)
      .filter((source) => source.startsWith('.') || source.startsWith('/'));
    expect(hostFiles.length).toBeGreaterThan(0);
    for (const source of hostFiles) expect(existsSync(join('deploy', source)), source).toBe(true);
    const mounted = [...pod.containers, ...cronJob!.spec.jobTemplate.spec.template.spec.containers].flatMap((c: Doc) => (c.volumeMounts ?? []).map((m: Doc) => m.mountPath as string));
    const secretText = readFileSync(join(K8S, 'secret.example.yaml'), 'utf8');
    for (const [, path] of secretText.matchAll(/sslrootcert=(\/[^&'\s]+)/g)) expect(mounted.some((m) => path!.startsWith(m)), path).toBe(true);
  });

  it('let the admin API\'s 1 MiB rule import through nginx, and tell the service the scheme', () => {
    const nginx = readFileSync('deploy/nginx.conf', 'utf8');
    const limit = /client_max_body_size (\d+)([km]?);/.exec(nginx)!;
    expect(Number(limit[1]) * { '': 1, k: 1024, m: 1024 * 1024 }[limit[2] as '' | 'k' | 'm']).toBeGreaterThanOrEqual(1024 * 1024);
    expect(nginx).toContain('proxy_set_header X-Forwarded-Proto $scheme;');
  });

  it('offer TLS at nginx as an override that mounts files that exist where nginx.conf includes them, proxying as the plain server does', () => {
    const tls = read('deploy/compose.tls.yaml')[0]!;
    expect(Object.keys(tls.services)).toEqual(['nginx']);
    const mounts = (tls.services.nginx.volumes as string[]).map((v) => v.split(':'));
    for (const [source] of mounts) expect(existsSync(join('deploy', source!)), source).toBe(true);
    const nginx = readFileSync('deploy/nginx.conf', 'utf8');
    const included = /include (\/etc\/nginx\/risk\.d)\/\*\.conf;/.exec(nginx)!;
    expect(mounts.find(([source]) => source === './nginx-tls.conf')?.[1]).toMatch(new RegExp(`^${included[1]!.replaceAll('.', '\\.')}/[^/]+\\.conf$`));
    const server = readFileSync('deploy/nginx-tls.conf', 'utf8');
    expect(server).toContain('listen 443 ssl;');
    const certificateFolder = mounts.find(([source]) => source === './tls')![1]!;
    for (const [, path] of server.matchAll(/^\s*ssl_certificate(?:_key)? (\S+);/gm)) expect(path!.startsWith(`${certificateFolder}/`), path).toBe(true);
    expect(tls.services.nginx.ports).toEqual(['8443:443']);
    // The same proxying as the plain server, line for line (comments and indentation aside).
    const locationBlock = (text: string) => /location \/ \{[\s\S]*?\n\s*\}/.exec(text)![0].split('\n').map((l) => l.trim()).filter((l) => l !== '' && !l.startsWith('#'));
    expect(locationBlock(server)).toEqual(locationBlock(nginx));
    expect(server).toMatch(/client_max_body_size 1m;/);
    expect(server).toMatch(/location = \/metrics \{\s*return 404;/);
  });

  it('pin image versions and set resource requests and limits', () => {
    for (const [name, service] of Object.entries(compose.services) as Array<[string, Doc]>) {
      if (service.image === undefined || service.image === 'risk-evaluation:local') continue; // the service's own, built here
      expect(service.image, name).toMatch(/:\d+\.\d+(\.\d+)?-\w+(@sha256:[0-9a-f]{64})?$/);
    }
    for (const name of ['risk-1', 'risk-2']) expect(compose.services[name].deploy.resources.limits.memory, name).toBeDefined();
    expect(container.resources.requests).toBeDefined();
    expect(container.resources.limits.memory).toBeDefined();
  });
});
