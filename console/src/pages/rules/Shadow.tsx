import { api, ApiProblem, ok } from '../../api/client';
import { ProblemMessage, Time } from '../../components/ui';
import { useResource } from '../../hooks';
import { href } from '../../router';
import { useSession } from '../../session';
import { Author } from './authors';

/**
 * The event type's shadow, at a glance: which version is scored beside the live one on every
 * evaluation (logged, never answered). Starting, stopping and comparing it live on the event
 * type's backtests page (pages/rules/backtest/Shadow.tsx), with the comparison beside them.
 */
export function Shadow({ eventType }: { eventType: string }) {
  const { account } = useSession();
  const shadow = useResource(async () => {
    try {
      return await ok(api.GET('/admin/v1/accounts/{account}/rule-sets/{event_type}/shadow', { params: { path: { account: account!, event_type: eventType } } }));
    } catch (error) {
      // No shadow runs: the API's answer is a 404 for it.
      if (error instanceof ApiProblem && error.code === 'resource_not_found') return null;
      throw error;
    }
  }, [account, eventType]);
  const running = shadow.data;
  return (
    <div class="shadow-line">
      <ProblemMessage problem={shadow.error} />
      {running ? (
        <p>
          <strong>In shadow:</strong> version {running.version} is scored beside the live version on every evaluation (logged, never answered) since <Time at={running.started_at} /> by <Author id={running.started_by} />.{' '}
          <a href={`${href(account!, 'rules', eventType, 'backtest')}`}>Compare it with live, or stop it</a>
        </p>
      ) : shadow.data === null ? (
        <p class="muted">No version runs in shadow. <a href={href(account!, 'rules', eventType, 'backtest')}>Run one beside the live rules</a></p>
      ) : null}
    </div>
  );
}
