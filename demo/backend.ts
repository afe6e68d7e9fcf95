import { readFileSync } from 'node:fs';
import Fastify, { type FastifyInstance } from 'fastify';
import { evaluateSignup, type SignupDecision, type SignupForm } from './evaluate-signup.js';
import { html, type Html } from './html.js';

/**
 * The demo's sign-up site: a page that loads the device SDK from the risk service, and the
 * backend its form posts to, which evaluates the sign-up before it would create the account.
 */
export interface DemoOptions {
  /** The risk service, e.g. http://127.0.0.1:3000, and an API key of it. */
  service: { url: string; apiKey: string };
  /** The SDK's path on the service and its integrity hash (Subresource Integrity). */
  sdk: { path: string; integrity: string };
}

const script = readFileSync(new URL('public/signup.js', import.meta.url));

export function createDemoBackend(options: DemoOptions): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 16 * 1024 });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  app.get('/', async (_request, reply) => reply.type('text/html; charset=utf-8').send(page(signupForm(options))));
  app.get('/signup.js', async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(script));
  app.post<{ Body: SignupForm & { demo_ip?: string } }>('/signup', async (request, reply) => {
    const form = request.body ?? { email: '' };
    // The connection's address, as a real backend would use it (behind a proxy: the trusted
    // X-Forwarded-For). On loopback that is 127.0.0.1, so the demo lets you try another.
    const ip = form.demo_ip?.trim() || request.ip;
    const decision = await evaluateSignup(options.service, form, ip);
    return reply.type('text/html; charset=utf-8').send(page(result(decision, form, ip)));
  });
  return app;
}

const STATES = {
  approve: { title: 'Approved: the account is created', tone: 'approve' },
  review: { title: 'Held for review: the account waits for a person', tone: 'review' },
  decline: { title: 'Declined: the sign-up is blocked', tone: 'decline' },
} as const;

function page(body: Html): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sign up · risk evaluation demo</title>
<link rel="icon" href="data:,">
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f4f5f7; color: #1d2430; }
  main { max-width: 34rem; margin: 2.5rem auto; background: #fff; padding: 2rem 2.25rem; border-radius: 10px; box-shadow: 0 1px 4px #0002; }
  h1 { font-size: 1.5rem; margin: 0 0 .25rem; }
  p.lead { color: #556; margin: 0 0 1.5rem; }
  label { display: block; font-weight: 600; margin: .9rem 0 .25rem; }
  input { width: 100%; box-sizing: border-box; padding: .55rem .7rem; font: inherit; border: 1px solid #c5cad3; border-radius: 6px; }
  .row { display: flex; gap: 1rem; } .row > div { flex: 1; }
  button { margin-top: 1.5rem; width: 100%; padding: .7rem; font: inherit; font-weight: 600; color: #fff; background: #2454d6; border: 0; border-radius: 6px; cursor: pointer; }
  button:disabled { background: #8ea3dc; }
  details { margin-top: 1.25rem; color: #445; } summary { cursor: pointer; }
  .hint { font-size: .85rem; color: #667; }
  .state { padding: 1rem 1.25rem; border-radius: 8px; margin-bottom: 1.25rem; font-weight: 600; }
  .approve { background: #e3f6e8; color: #145c2a; } .review { background: #fff3d6; color: #7a5200; } .decline { background: #fde4e4; color: #8c1d1d; }
  .score { font-size: 2.25rem; font-weight: 700; }
  table { width: 100%; border-collapse: collapse; margin: .5rem 0 1rem; } td { padding: .35rem .25rem; border-bottom: 1px solid #e6e8ec; } td.points { text-align: right; font-variant-numeric: tabular-nums; }
  code, pre { font: .85rem ui-monospace, monospace; } pre { background: #f4f5f7; padding: .75rem; border-radius: 6px; white-space: pre-wrap; word-break: break-all; }
  a { color: #2454d6; }
</style>
</head>
<body><main>${body}</main></body>
</html>
`.text;
}

function signupForm({ service, sdk }: DemoOptions): Html {
  return html`<h1>Create your account</h1>
<p class="lead">A demo sign-up: the backend asks the risk service before it creates the account.</p>
<form id="signup" method="post" action="/signup">
  <div class="row">
    <div><label for="first_name">First name</label><input id="first_name" name="first_name" autocomplete="given-name"></div>
    <div><label for="last_name">Last name</label><input id="last_name" name="last_name" autocomplete="family-name"></div>
  </div>
  <label for="email">E-mail</label><input id="email" name="email" type="email" required autocomplete="email" placeholder="jane@example.com">
  <label for="password">Password</label><input id="password" name="password" type="password" autocomplete="new-password">
  <input type="hidden" name="device_intelligence">
  <details><summary>Demo settings</summary>
    <label for="demo_ip">Evaluate as IP address</label><input id="demo_ip" name="demo_ip" placeholder="the connection's (127.0.0.1 here)">
    <p class="hint">Try a disposable address (anything@mailinator.com) to see a decline.</p>
  </details>
  <button type="submit">Sign up</button>
</form>
<script src="${service.url}${sdk.path}" integrity="${sdk.integrity}" crossorigin="anonymous"></script>
<script src="/signup.js"></script>`;
}

function result(decision: SignupDecision, form: SignupForm, ip: string): Html {
  const again = html`<p><a href="/">Try another sign-up</a></p>`;
  if (decision.outcome === 'unavailable') {
    return html`<h1>Sign-up received</h1>
<div class="state review">The risk service could not be reached: the sign-up is held for review.</div>
<p class="hint">${decision.reason}</p>${again}`;
  }
  if (decision.outcome === 'refused') {
    return html`<h1>Please check the form</h1>
<div class="state decline">${decision.problem.detail}</div>
<ul>${(decision.problem.errors ?? []).map((e) => html`<li><code>${e.path}</code>: ${e.message}</li>`)}</ul>${again}`;
  }
  const { score, signals, unavailable } = decision.evaluation;
  const state = STATES[score.state];
  return html`<h1>Sign-up of ${form.email}</h1>
<div class="state ${state.tone}" data-state="${score.state}">${state.title}</div>
<p>Fraud score <span class="score">${score.fraud_score}</span> / 100 &nbsp;·&nbsp; state <strong>${score.state}</strong></p>
<h2>Reasons</h2>
${
  score.details.length > 0
    ? html`<table id="reasons">${score.details.map((d) => html`<tr><td>${d.rule_name}</td><td class="points">+${d.score}</td></tr>`)}</table>`
    : html`<p id="reasons">No rule fired.</p>`
}
<p class="hint">Signals: ${signals.length > 0 ? signals.join(', ') : 'none'}${unavailable.length > 0 ? html`<br>Could not check: ${unavailable.join(', ')}` : ''}</p>
<details><summary>What the backend sent</summary>
<pre id="sent">${JSON.stringify({ ip, email: form.email, event_type: 'account_register', device_intelligence: decision.device ?? null }, null, 2)}</pre>
</details>
${again}`;
}
