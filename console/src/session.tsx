import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { Answered } from './api/client';

export type SessionInfo = Answered<'getSession'>;
export type Role = 'admin' | 'analyst';

export interface SessionContext {
  session: SessionInfo;
  /** The account shown; undefined for an owner of an instance with no account yet. */
  account: string | undefined;
  /** The caller's role in it (owners: admin). */
  role: Role | undefined;
  owner: boolean;
  refresh(): Promise<void>;
}

export const Session = createContext<SessionContext | null>(null);

export function useSession(): SessionContext {
  const context = useContext(Session);
  if (context === null) throw new Error('useSession outside a session');
  return context;
}
