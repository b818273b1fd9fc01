// The signed-in session as a context: who is signed in, their role, what this server runs.
import { createContext } from 'preact';
import { useContext } from 'preact/hooks';
import type { SessionJson } from './types.ts';

export const SessionContext = createContext<SessionJson | null>(null);

export function useSession(): SessionJson {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSession outside a signed-in page');
  return session;
}

/** Only an admin sees mutating buttons; a viewer reads (the server refuses a viewer's changes anyway). */
export function useIsAdmin(): boolean {
  return useSession().actor.role === 'admin';
}
