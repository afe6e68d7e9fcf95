import { ProblemMessage, Time } from '../../components/ui';
import { href } from '../../router';
import { useSession } from '../../session';
import { Author } from './authors';
import { useShadow } from './backtest/Shadow';

/**
 * The event type's shadow, at a glance: which version is scored beside the live one on every
 * evaluation (logged, never answered). Starting, stopping and comparing it live on the event
 * type's backtests page (pages/rules/backtest/Shadow.tsx), with the comparison beside them.
 */
export function Shadow({ eventType }: { eventType: string }) {
  const { account } = useSession();
  const shadow = useShadow(account!, eventType);
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
