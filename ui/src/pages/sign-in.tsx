// Sign-in: an admin or viewer key becomes an HttpOnly session cookie (POST ./api/session); the key
// itself is never stored by the page.
import { useState } from 'preact/hooks';
import { ApiError, api } from '../api.ts';
import { ErrorNote, Heading } from '../components.tsx';
import type { SessionJson } from '../types.ts';

export function SignInPage({ onSignedIn }: { onSignedIn: (session: SessionJson) => void }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [busy, setBusy] = useState(false);

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const session = await api<SessionJson>('./api/session', { method: 'POST', body: { key: key.trim() }, ignoreUnauthorized: true });
      setKey('');
      onSignedIn(session);
    } catch (caught) {
      setError(explain(caught));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" class="sign-in">
      <Heading>Sign in</Heading>
      <p>Sign in with an admin or viewer key. The console keeps a session cookie, not the key.</p>
      <form onSubmit={submit}>
        <label for="sign-in-key">Key</label>
        <input id="sign-in-key" name="key" type="password" autoComplete="off" required value={key} onInput={(e) => setKey(e.currentTarget.value)} />
        <button type="submit" disabled={busy || key.trim() === ''}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      <ErrorNote error={error} />
    </main>
  );
}

function explain(error: unknown): string {
  if (!(error instanceof ApiError)) return String(error);
  if (error.status === 429) return `${error.message} (too many failed sign-ins from this address: wait and try again)`;
  return error.message;
}
