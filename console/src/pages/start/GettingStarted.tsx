import { useRef, useState } from 'preact/hooks';
import { api, ok, type Answered } from '../../api/client';
import { Confirm, CopyButton, Field, Loading, Page, ProblemMessage, Time } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { href, navigate } from '../../router';
import { useSession } from '../../session';
import { AdviceText, CHECK_ADVICE } from '../sources/advice';

type KeyInfo = Answered<'listKeys'>['keys'][number];
type NewKey = { key: string; info: KeyInfo; replaced?: KeyInfo };

/** The request the curl example sends: the documented example body, to this service's origin. */
export const curlFor = (origin: string, key: string) =>
  `curl -s ${origin}/v1/risk/evaluate \\\n  -H "Authorization: Bearer ${key}" \\\n  -H 'Content-Type: application/json' \\\n` +
  `  -d '{"ip":"81.2.69.160","email":"jane.doe@example.com","event_type":"account_register"}'`;

/** The same request from Node.js (18+, fetch built in) and from Python 3 (standard library only). */
export const nodeFor = (origin: string, key: string) =>
  `const response = await fetch('${origin}/v1/risk/evaluate', {\n  method: 'POST',\n  headers: { Authorization: 'Bearer ${key}', 'Content-Type': 'application/json' },\n` +
  `  body: JSON.stringify({ ip: '81.2.69.160', email: 'jane.doe@example.com', event_type: 'account_register' }),\n});\nconsole.log(await response.json());`;

export const pythonFor = (origin: string, key: string) =>
  `import json, urllib.request\n\nrequest = urllib.request.Request(\n    '${origin}/v1/risk/evaluate',\n` +
  `    data=json.dumps({'ip': '81.2.69.160', 'email': 'jane.doe@example.com', 'event_type': 'account_register'}).encode(),\n` +
  `    headers={'Authorization': 'Bearer ${key}', 'Content-Type': 'application/json'},\n)\nprint(json.load(urllib.request.urlopen(request)))`;

/** The example request, as the test event the page sends (a dry run: nothing is logged or counted). */
const EXAMPLE_REQUEST = { ip: '81.2.69.160', email: 'jane.doe@example.com' };

const keyName = (k: KeyInfo) => (k.prefix ? `${k.prefix}…` : k.id);

/** The keys of API_KEYS: those served from the environment less the development key, which has its own row. */
const fromApiKeys = (list: { env_keys: number; development_key: unknown }) => list.env_keys - (list.development_key ? 1 : 0);

/**
 * The first-run screen (spec §5.3): how to call the service, and the account's API keys (at most
 * two, both valid at once, so one can be replaced while the other serves).
 */
export function GettingStarted() {
  const { account, owner } = useSession();
  if (account === undefined) {
    return (
      <Page title="Getting started" intro="There is no account yet. An account holds API keys, rule sets and decisions; each customer or environment gets one.">
        {owner ? <CreateAccount /> : <p>You are not a member of any account yet: ask an owner or an account admin to add you.</p>}
      </Page>
    );
  }
  return <Keys account={account} />;
}

function CreateAccount() {
  const { refresh } = useSession();
  const [id, setId] = useState('');
  const [name, setName] = useState('');
  const create = useAction(async () => {
    const made = await ok(api.POST('/admin/v1/accounts', { body: { id, name: name || undefined } }));
    await refresh();
    navigate(href(made.id, 'start'));
  });
  return (
    <form class="card" onSubmit={(e) => { e.preventDefault(); void create.run(); }}>
      <h2>Create an account</h2>
      <Field label="Account id" required value={id} onInput={(e) => setId(e.currentTarget.value)} hint="Lower-case letters, digits and dashes, e.g. acme." error={create.error?.field('id')} />
      <Field label="Name (optional)" value={name} onInput={(e) => setName(e.currentTarget.value)} error={create.error?.field('name')} />
      <ProblemMessage problem={create.error?.errors.length ? undefined : create.error} />
      <button type="submit" class="primary" disabled={create.busy}>Create account</button>
    </form>
  );
}

function Keys({ account }: { account: string }) {
  const { role } = useSession();
  const admin = role === 'admin';
  const keys = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/keys', { params: { path: { account } } })), [account]);
  const [shown, setShown] = useState<NewKey | undefined>();
  const [confirm, setConfirm] = useState<{ kind: 'rotate' | 'revoke'; key: KeyInfo } | undefined>();
  const path = { account };

  const generate = useAction(async () => {
    setShown(await ok(api.POST('/admin/v1/accounts/{account}/keys', { params: { path } })));
    keys.reload();
  });
  const change = useAction(async (kind: 'rotate' | 'revoke', key: KeyInfo) => {
    const params = { path: { account, key_id: key.id } };
    if (kind === 'rotate') setShown(await ok(api.POST('/admin/v1/accounts/{account}/keys/{key_id}/rotate', { params })));
    else {
      await ok(api.DELETE('/admin/v1/accounts/{account}/keys/{key_id}', { params }));
      setShown(undefined);
    }
    setConfirm(undefined);
    keys.reload();
  });

  const list = keys.data;
  const total = list ? list.keys.length + list.env_keys : 0;
  const full = list !== undefined && total >= list.max_keys;
  const example = shown?.key ?? '$RISK_API_KEY';

  return (
    <Page title="Getting started" intro="Your backend calls this service before it creates an account or lets a user log in, then approves, holds for review or blocks. Three steps:">
      <section class="card" aria-labelledby="step-key">
        <h2 id="step-key">1. Make an API key</h2>
        <p>
          An account has at most {list?.max_keys ?? 2} keys and both work at once: replace one while the other keeps serving. Keep keys in a
          secrets manager or the environment of your backend, never in a page or an app.
        </p>
        {keys.loading && !list ? <Loading what="keys" /> : null}
        <ProblemMessage problem={keys.error} />
        {list ? (
          <table>
            <caption class="visually-hidden">API keys of {account}</caption>
            <thead>
              <tr><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Made by</th>{admin ? <th scope="col"><span class="visually-hidden">Actions</span></th> : null}</tr>
            </thead>
            <tbody>
              {list.keys.map((k) => (
                <tr key={k.id}>
                  <td><code>{keyName(k)}</code> <span class="muted">{k.id}</span></td>
                  <td><Time at={k.created_at} /></td>
                  <td><Time at={k.last_used_at} /></td>
                  <td>{k.created_by}</td>
                  {admin ? (
                    <td class="row-actions">
                      <button type="button" onClick={() => setConfirm({ kind: 'rotate', key: k })} aria-label={`Rotate key ${keyName(k)}`}>Rotate</button>
                      <button type="button" class="danger" onClick={() => setConfirm({ kind: 'revoke', key: k })} aria-label={`Revoke key ${keyName(k)}`}>Revoke</button>
                    </td>
                  ) : null}
                </tr>
              ))}
              {list.development_key ? (
                <tr key={list.development_key.id} class="development-key">
                  <td><code>{list.development_key.prefix}…</code> <span class="muted">{list.development_key.id}</span> <span class="badge-light">development key</span></td>
                  <td colSpan={admin ? 4 : 3} class="muted">
                    Made by this development start and kept in <code>{list.development_key.file}</code> in the server's folder
                    (<code>cat {list.development_key.file}</code> shows it). Never used in production: set API_KEYS or make a key here.
                  </td>
                </tr>
              ) : null}
              {list.keys.length === 0 && !list.development_key ? <tr><td colSpan={admin ? 5 : 4} class="muted">No key in the store yet.</td></tr> : null}
            </tbody>
          </table>
        ) : null}
        {list && fromApiKeys(list) > 0 ? (
          <p class="muted">
            {fromApiKeys(list)} more {fromApiKeys(list) === 1 ? 'key comes' : 'keys come'} from the server's API_KEYS variable, not the store.
            They count towards the limit and are managed there.
          </p>
        ) : null}
        {admin ? (
          <div class="actions">
            <button type="button" class="primary" onClick={() => void generate.run()} disabled={generate.busy || full}>Generate a key</button>
            {full ? <span class="muted">The account has {list?.max_keys} keys: rotate or revoke one to make another.</span> : null}
          </div>
        ) : (
          <p class="muted">Your role in this account is analyst: keys are made, rotated and revoked by its admins.</p>
        )}
        <ProblemMessage problem={generate.error} />
        {shown ? <ShownKey shown={shown} onDone={() => setShown(undefined)} /> : null}
      </section>

      <section class="card" aria-labelledby="step-call">
        <h2 id="step-call">2. Evaluate an event from your backend</h2>
        <p>Send the user's IP address and e-mail address with the event type; the answer has the score, the state (approve, review, decline) and why.</p>
        <h3>curl</h3>
        <CommandBlock text={curlFor(location.origin, example)} copyLabel="Copy command" />
        <h3>Node.js</h3>
        <CommandBlock text={nodeFor(location.origin, example)} copyLabel="Copy the Node.js code" />
        <h3>Python</h3>
        <CommandBlock text={pythonFor(location.origin, example)} copyLabel="Copy the Python code" />
        <p class="muted">
          Optional: collect device data in your sign-up page with <code>{`<script src="${location.origin}/sdk/v1/device.js"></script>`}</code> and send what <code>RiskDevice.collect()</code> returns as <code>device_intelligence</code>.
        </p>
      </section>

      <TestEvent account={account} />

      {confirm ? (
        <Confirm
          title={confirm.kind === 'rotate' ? `Rotate key ${keyName(confirm.key)}?` : `Revoke key ${keyName(confirm.key)}?`}
          action={confirm.kind === 'rotate' ? 'Rotate key' : 'Revoke key'}
          busy={change.busy}
          problem={change.error}
          onCancel={() => { setConfirm(undefined); change.clear(); }}
          onConfirm={() => void change.run(confirm.kind, confirm.key)}
        >
          <p>
            <strong>Key {keyName(confirm.key)} stops working</strong> at once on this server and on every other replica within a few seconds
            (RELOAD_INTERVAL_MS): every backend still sending it gets <code>401 Unauthorized</code> and no evaluation.
          </p>
          {confirm.kind === 'rotate' ? (
            <p>A new key replaces it and is shown once. {total > 1 ? 'The other key keeps serving.' : ''} Put the new key in your backend before you rotate, or right after.</p>
          ) : total <= 1 ? (
            <p><strong>This is the account's last key:</strong> evaluations for {account} stop until you generate another.</p>
          ) : (
            <p>The other key keeps serving.</p>
          )}
        </Confirm>
      ) : null}
    </Page>
  );
}

function ShownKey({ shown, onDone }: { shown: NewKey; onDone: () => void }) {
  const input = useRef<HTMLInputElement>(null);
  return (
    <div class="new-key" role="region" aria-labelledby="new-key-title">
      <h3 id="new-key-title">{shown.replaced ? `New key, replacing ${keyName(shown.replaced)}` : 'Your new key'}</h3>
      <p><strong>Copy it now: it is shown this once.</strong> Only its prefix is kept; nobody can read it again.</p>
      <div class="key-row">
        <label for="new-key-value" class="visually-hidden">New API key</label>
        <input id="new-key-value" ref={input} class="mono" readOnly value={shown.key} onFocus={(e) => e.currentTarget.select()} />
        <CopyButton text={shown.key} label="Copy key" target={() => input.current} />
      </div>
      <button type="button" onClick={onDone}>I have stored it</button>
    </div>
  );
}

type DryRun = Answered<'dryRunRuleSet'>;

/**
 * The example request scored by the live sign-up rules as a dry run (nothing logged or counted),
 * once when the page opens and again on "Send a test event": the answer, and in plain words which
 * default rules cannot fire on this server yet, with the command that fixes each.
 */
function TestEvent({ account }: { account: string }) {
  const send = useAction(() =>
    ok(api.POST('/admin/v1/accounts/{account}/rule-sets/{event_type}/dry-run', {
      params: { path: { account, event_type: 'account_register' } },
      body: { request: EXAMPLE_REQUEST, version: 'published' },
    })),
  );
  const [answer, setAnswer] = useState<DryRun | undefined>();
  const first = useResource(() => send.run().then((a) => (a === undefined ? undefined : (setAnswer(a), a))), [account]);
  const shown = answer ?? first.data;
  // Which check each library rule needs (ip_tor: ip.tor): only rules whose data is missing here are
  // named, not those unknown for a passing reason (a DNS timeout; behaviour, which a dry run never reads).
  const library = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/rules/library', { params: { path: { account } } })), [account]);
  const checkOf = new Map((library.data?.rules ?? []).map((r) => [r.id, r.check]));
  const unavailable = new Set(shown?.unavailable ?? []);
  const rules = [...unavailable]
    .filter((u) => u.startsWith('rule:'))
    .map((u) => u.slice('rule:'.length))
    .filter((id) => { const check = checkOf.get(id); return check != null && unavailable.has(check) && CHECK_ADVICE[check] !== undefined; });
  const checks = [...new Set(rules.map((id) => checkOf.get(id)!))];
  return (
    <section class="card" aria-labelledby="step-test">
      <h2 id="step-test">3. Send a test event</h2>
      <p>
        Scores the example request above (<code>{EXAMPLE_REQUEST.ip}</code>, <code>{EXAMPLE_REQUEST.email}</code>) with this account's live sign-up
        rules, as a dry run: nothing is logged or counted.
      </p>
      <div class="actions">
        <button type="button" class="primary" onClick={() => void send.run().then((a) => a && setAnswer(a))} disabled={send.busy}>Send a test event</button>
      </div>
      <ProblemMessage problem={send.error} />
      {shown ? (
        <p class="test-answer">
          Answer: <strong data-state={shown.score.state}>{shown.score.state}</strong>, score {shown.score.fraud_score}
          {shown.score.details.length > 0 ? ` (${shown.score.details.map((d) => d.rule_name).join('; ')})` : ''}.
        </p>
      ) : null}
      {rules.length > 0 ? (
        <div class="notice" role="note" aria-labelledby="cannot-fire">
          <h3 id="cannot-fire">{rules.length === 1 ? '1 default rule cannot fire yet' : `${rules.length} default rules cannot fire yet`}: {rules.map((r, i) => <>{i > 0 ? ', ' : ''}<code>{r}</code></>)}</h3>
          <p>Their data is not loaded on this server, so every answer lists them in <code>unavailable</code> and they never add to a score.</p>
          <ul>
            {checks.map((check) => <li key={check}><code>{check}</code>: <AdviceText advice={CHECK_ADVICE[check]!} /></li>)}
          </ul>
        </div>
      ) : null}
    </section>
  );
}

function CommandBlock({ text, copyLabel }: { text: string; copyLabel: string }) {
  const area = useRef<HTMLTextAreaElement>(null);
  return (
    <div class="command">
      <pre><code>{text}</code></pre>
      <CopyButton text={text} label={copyLabel} target={() => area.current} />
      <textarea ref={area} class="visually-hidden" tabIndex={-1} aria-hidden="true" readOnly value={text} />
    </div>
  );
}
