import { useState } from 'preact/hooks';
import { api, ok, type Answered } from '../../api/client';
import { Confirm, CopyButton, Field, Loading, Page, ProblemMessage, Time } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { useSession } from '../../session';

type Endpoint = Answered<'listWebhookEndpoints'>['endpoints'][number];
type Delivery = Answered<'listWebhookDeliveries'>['deliveries'][number];
type Event = Endpoint['events'][number];

const EVENTS: Array<[Event, string]> = [
  ['review.opened', 'an evaluation is held for review'],
  ['review.resolved', 'a review is resolved (approve or decline)'],
  ['evaluation.declined', 'an evaluation is declined'],
];

/**
 * The account's webhook endpoints (README "Webhooks"), for its admins: add one (its signing
 * secret shown once, with a copy button), edit its URL, events or whether it is on, rotate its
 * secret (the previous one signs too for a day), send a test delivery, remove it; and each
 * endpoint's delivery log, every attempt with its status code and time, with "Send again".
 */
export function Webhooks() {
  const { account } = useSession();
  return (
    <Page title="Webhooks" intro="Your backend is told when an evaluation is held for review, when a review is resolved, and when an evaluation is declined: a signed POST to each endpoint that takes the event, retried for a day until it answers 2xx.">
      {account ? <Endpoints account={account} /> : null}
    </Page>
  );
}

function NewSecret({ url, secret, rotated }: { url: string; secret: string; rotated: boolean }) {
  let input: HTMLInputElement | null = null;
  return (
    <div class="new-key" role="region" aria-label="Signing secret shown once">
      <p>
        Signing secret for <strong class="mono">{url}</strong>, shown this once: put it where your receiver checks signatures.
        {rotated ? ' The previous secret keeps signing too for 24 hours, so the receiver can switch without losing a delivery.' : null}
      </p>
      <div class="key-row">
        <label class="visually-hidden" for="webhook-secret">Signing secret</label>
        <input id="webhook-secret" class="mono" readOnly value={secret} ref={(e) => { input = e; }} />
        <CopyButton text={secret} label="Copy secret" target={() => input} />
      </div>
    </div>
  );
}

function EventChoices({ legend, chosen, onChange, error }: { legend: string; chosen: Event[]; onChange: (events: Event[]) => void; error?: string | undefined }) {
  return (
    <fieldset class="events" aria-describedby={error ? 'events-error' : undefined}>
      <legend>{legend}</legend>
      {EVENTS.map(([event, text]) => (
        <label key={event} class="check">
          <input type="checkbox" checked={chosen.includes(event)}
            onChange={(e) => onChange(e.currentTarget.checked ? [...chosen, event] : chosen.filter((x) => x !== event))} />{' '}
          <code>{event}</code> <span class="muted">{text}</span>
        </label>
      ))}
      {error ? <small id="events-error" class="field-error">{error}</small> : null}
    </fieldset>
  );
}

function Endpoints({ account }: { account: string }) {
  const path = { account };
  const endpoints = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/webhooks', { params: { path } })), [account]);
  const [url, setUrl] = useState('');
  const [events, setEvents] = useState<Event[]>(['review.resolved']);
  const [secret, setSecret] = useState<{ url: string; secret: string; rotated: boolean } | undefined>();
  const [editing, setEditing] = useState<Endpoint | undefined>();
  const [removing, setRemoving] = useState<Endpoint | undefined>();
  const [rotating, setRotating] = useState<Endpoint | undefined>();
  const [shown, setShown] = useState<string | undefined>();
  const [tested, setTested] = useState<{ endpoint: string; delivery: Delivery } | undefined>();

  const add = useAction(async () => {
    const answer = await ok(api.POST('/admin/v1/accounts/{account}/webhooks', { params: { path }, body: { url, events } }));
    setSecret({ url: answer.endpoint.url, secret: answer.secret, rotated: false });
    setUrl('');
    endpoints.reload();
  });
  const rotate = useAction(async (endpoint: Endpoint) => {
    const answer = await ok(api.POST('/admin/v1/accounts/{account}/webhooks/{endpoint_id}/rotate', { params: { path: { ...path, endpoint_id: endpoint.id } } }));
    setRotating(undefined);
    setSecret({ url: answer.endpoint.url, secret: answer.secret, rotated: true });
    endpoints.reload();
  });
  const remove = useAction(async (endpoint: Endpoint) => {
    await ok(api.DELETE('/admin/v1/accounts/{account}/webhooks/{endpoint_id}', { params: { path: { ...path, endpoint_id: endpoint.id } } }));
    setRemoving(undefined);
    if (shown === endpoint.id) setShown(undefined);
    endpoints.reload();
  });
  const test = useAction(async (endpoint: Endpoint) => {
    const delivery = await ok(api.POST('/admin/v1/accounts/{account}/webhooks/{endpoint_id}/test', { params: { path: { ...path, endpoint_id: endpoint.id } } }));
    setTested({ endpoint: endpoint.id, delivery });
    setShown(endpoint.id);
  });

  const list = endpoints.data?.endpoints;
  return (
    <>
      <section class="card" aria-labelledby="endpoints">
        <h2 id="endpoints">Endpoints</h2>
        {endpoints.loading && !list ? <Loading what="endpoints" /> : null}
        <ProblemMessage problem={endpoints.error ?? test.error} />
        {list ? (
          <table>
            <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Added</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>
              {list.map((e) => (
                <tr key={e.id}>
                  <td class="mono nowrap">{e.url}</td>
                  <td>{e.events.map((x) => <code key={x} class="event">{x}</code>)}</td>
                  <td>{e.enabled ? 'on' : 'off'}{e.rotating ? <span class="muted"> · previous secret valid until <Time at={e.previous_until} /></span> : null}</td>
                  <td><Time at={e.created_at} /></td>
                  <td class="row-actions"><div class="button-row">
                    <button type="button" onClick={() => void test.run(e)} disabled={test.busy} aria-label={`Send test to ${e.url}`}>Send test</button>
                    <button type="button" onClick={() => setShown(shown === e.id ? undefined : e.id)} aria-expanded={shown === e.id} aria-label={`Delivery log of ${e.url}`}>Delivery log</button>
                    <button type="button" onClick={() => setEditing(e)} aria-label={`Edit ${e.url}`}>Edit</button>
                    <button type="button" onClick={() => setRotating(e)} aria-label={`Rotate secret of ${e.url}`}>Rotate secret</button>
                    <button type="button" class="danger" onClick={() => setRemoving(e)} aria-label={`Delete ${e.url}`}>Delete</button>
                  </div></td>
                </tr>
              ))}
              {list.length === 0 ? <tr><td colSpan={5} class="muted">No endpoint yet: add one below.</td></tr> : null}
            </tbody>
          </table>
        ) : null}
        {tested ? <TestResult delivery={tested.delivery} /> : null}
        {editing ? (
          <EditEndpoint key={editing.id} account={account} endpoint={editing} onDone={() => { setEditing(undefined); endpoints.reload(); }} />
        ) : (
          <form class="webhook-form" onSubmit={(e) => { e.preventDefault(); void add.run(); }}>
            <h3>Add an endpoint</h3>
            <Field label="URL" type="url" required placeholder="https://backend.example.com/hooks/risk" value={url} onInput={(e) => setUrl(e.currentTarget.value)} error={add.error?.field('url')} />
            <EventChoices legend="Events it takes" chosen={events} onChange={setEvents} error={add.error?.field('events')} />
            <button type="submit" class="primary" disabled={add.busy}>Add endpoint</button>
            <ProblemMessage problem={add.error?.errors.length ? undefined : add.error} />
          </form>
        )}
        {secret ? <NewSecret {...secret} /> : null}
      </section>
      {shown && list?.some((e) => e.id === shown) ? <DeliveryLog key={`${shown}-${tested?.delivery.id ?? ''}`} account={account} endpoint={list.find((e) => e.id === shown)!} /> : null}
      {removing ? (
        <Confirm title={`Delete the endpoint ${removing.url}?`} action="Delete endpoint" busy={remove.busy} problem={remove.error}
          onCancel={() => setRemoving(undefined)} onConfirm={() => void remove.run(removing)}>
          <p>Nothing more is sent to it. Its pending deliveries and its delivery log go with it. To pause it instead, edit it and switch it off.</p>
        </Confirm>
      ) : null}
      {rotating ? (
        <Confirm title={`Rotate the signing secret of ${rotating.url}?`} action="Rotate secret" busy={rotate.busy} problem={rotate.error}
          onCancel={() => setRotating(undefined)} onConfirm={() => void rotate.run(rotating)}>
          <p>A new secret is made and shown once. For 24 hours each delivery is signed with both the new and the current secret, so your receiver can switch to the new one without losing a delivery; after that only the new one signs.</p>
        </Confirm>
      ) : null}
    </>
  );
}

function EditEndpoint({ account, endpoint, onDone }: { account: string; endpoint: Endpoint; onDone: () => void }) {
  const [url, setUrl] = useState(endpoint.url);
  const [events, setEvents] = useState<Event[]>(endpoint.events);
  const [enabled, setEnabled] = useState(endpoint.enabled);
  const save = useAction(async () => {
    await ok(api.PATCH('/admin/v1/accounts/{account}/webhooks/{endpoint_id}', { params: { path: { account, endpoint_id: endpoint.id } }, body: { url, events, enabled } }));
    onDone();
  });
  return (
    <form class="webhook-form" aria-label={`Edit ${endpoint.url}`} onSubmit={(e) => { e.preventDefault(); void save.run(); }}>
      <h3>Edit <span class="mono">{endpoint.url}</span></h3>
      <Field label="URL" type="url" required value={url} onInput={(e) => setUrl(e.currentTarget.value)} error={save.error?.field('url')} />
      <EventChoices legend="Events it takes" chosen={events} onChange={setEvents} error={save.error?.field('events')} />
      <label class="check"><input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> On (off: nothing is sent, and its pending deliveries fail)</label>
      <div class="actions">
        <button type="button" onClick={onDone}>Cancel</button>
        <button type="submit" class="primary" disabled={save.busy}>Save endpoint</button>
      </div>
      <ProblemMessage problem={save.error?.errors.length ? undefined : save.error} />
    </form>
  );
}

const outcome = (a: Delivery['attempts'][number]) => (a.status_code !== null ? `${a.status_code}` : 'no answer');

function TestResult({ delivery }: { delivery: Delivery }) {
  const last = delivery.attempts.at(-1);
  return (
    <p role="status" class={delivery.status === 'delivered' ? 'test-result ok' : 'test-result bad'}>
      Test delivery {delivery.status === 'delivered' ? 'delivered' : 'failed'}
      {last ? `: ${outcome(last)} in ${last.duration_ms} ms${last.error ? ` (${last.error})` : ''}` : ': sent by another replica, see the delivery log'}
      {delivery.status === 'pending' ? '. Retried on the back-off.' : '.'}
    </p>
  );
}

function DeliveryLog({ account, endpoint }: { account: string; endpoint: Endpoint }) {
  const path = { account, endpoint_id: endpoint.id };
  const deliveries = useResource(() => ok(api.GET('/admin/v1/accounts/{account}/webhooks/{endpoint_id}/deliveries', { params: { path, query: { limit: 50 } } })), [account, endpoint.id]);
  const [queued, setQueued] = useState<string | undefined>();
  const resend = useAction(async (delivery: Delivery) => {
    const again = await ok(api.POST('/admin/v1/accounts/{account}/webhooks/{endpoint_id}/deliveries/{delivery_id}/resend', { params: { path: { ...path, delivery_id: delivery.id } } }));
    setQueued(again.id);
    deliveries.reload();
  });
  const rows = deliveries.data?.deliveries;
  return (
    <section class="card" aria-labelledby="delivery-log">
      <h2 id="delivery-log">Delivery log of <span class="mono">{endpoint.url}</span></h2>
      <p class="muted">Newest first, the last 50; each attempt with the receiver's status code and how long it took. Kept 30 days.</p>
      <div class="actions"><button type="button" onClick={deliveries.reload} disabled={deliveries.loading}>Refresh</button></div>
      {deliveries.loading && !rows ? <Loading what="deliveries" /> : null}
      <ProblemMessage problem={deliveries.error ?? resend.error} />
      {queued ? <p role="status">Queued again as <code>{queued}</code>: sent within a second.</p> : null}
      {rows ? (
        <table class="deliveries">
          <thead><tr><th scope="col">Event</th><th scope="col">Queued</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
          <tbody>
            {rows.map((d) => (
              <tr key={d.id}>
                <td><code>{d.type}</code><br /><small class="mono muted">{d.id}</small>{d.resent_from ? <><br /><small class="muted">sent again from <span class="mono">{d.resent_from}</span></small></> : null}</td>
                <td><Time at={d.created_at} /></td>
                <td><span class={`state ${d.status === 'delivered' ? 'ok' : d.status === 'pending' ? 'warn' : 'bad'}`}>{d.status}</span>
                  {d.status === 'pending' && d.next_attempt_at ? <><br /><small class="muted">next <Time at={d.next_attempt_at} /></small></> : null}</td>
                <td>
                  {d.attempts.length === 0 ? <span class="muted">not sent yet</span> : (
                    <ol class="attempts">
                      {d.attempts.map((a) => (
                        <li key={a.attempt}><span class="nowrap">{outcome(a)} · {a.duration_ms} ms</span>{a.error ? <span class="muted"> · {a.error}</span> : null} <small class="muted"><Time at={a.started_at} /></small></li>
                      ))}
                    </ol>
                  )}
                </td>
                <td class="row-actions"><button type="button" onClick={() => void resend.run(d)} disabled={resend.busy} aria-label={`Send again: ${d.type} ${d.id}`}>Send again</button></td>
              </tr>
            ))}
            {rows.length === 0 ? <tr><td colSpan={5} class="muted">Nothing sent yet: press "Send test".</td></tr> : null}
          </tbody>
        </table>
      ) : null}
    </section>
  );
}
