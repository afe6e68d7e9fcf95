import { api, ApiProblem, ok } from '../../api/client';
import { ProblemMessage, Time } from '../../components/ui';
import { useAction, useResource } from '../../hooks';
import { useSession } from '../../session';
import { Author } from './authors';

/**
 * The event type's shadow: a version scored beside the live one on every evaluation, logged and
 * never answered. Admins start it with the draft (as it is now: later edits need a restart) or stop it.
 */
export function Shadow({ eventType, admin, draftVersion }: { eventType: string; admin: boolean; draftVersion: number | undefined }) {
  const { account } = useSession();
  const path = { account: account!, event_type: eventType };
  const shadow = useResource(async () => {
    try {
      return await ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}/shadow', { params: { path } }));
    } catch (error) {
      // No shadow runs: the API's answer is a 404 for it.
      if (error instanceof ApiProblem && error.code === 'resource_not_found') return null;
      throw error;
    }
  }, [account, eventType]);
  const start = useAction(async () => {
    await ok(api.POST('/admin/v1/accounts/{account}/rule-sets/{event_type}/shadow', { params: { path }, body: {} }));
    shadow.reload();
  });
  const stop = useAction(async () => {
    await ok(api.DELETE('/admin/v1/accounts/{account}/rule-sets/{event_type}/shadow', { params: { path } }));
    shadow.reload();
  });
  const running = shadow.data;
  return (
    <div class="shadow-line">
      <ProblemMessage problem={shadow.error ?? start.error ?? stop.error} />
      {running ? (
        <p>
          <strong>In shadow:</strong> version {running.version} is scored beside the live version on every evaluation (logged, never answered) since <Time at={running.started_at} /> by <Author id={running.started_by} />.
        </p>
      ) : shadow.data === null ? <p class="muted">No version runs in shadow.</p> : null}
      {admin && shadow.data !== undefined ? (
        <div class="actions">
          {draftVersion !== undefined ? (
            <button type="button" onClick={() => void start.run()} disabled={start.busy}>
              {running?.version === draftVersion ? 'Restart the shadow with the draft as it is now' : 'Run the draft in shadow'}
            </button>
          ) : null}
          {running ? <button type="button" onClick={() => void stop.run()} disabled={stop.busy}>Stop the shadow</button> : null}
        </div>
      ) : null}
    </div>
  );
}
