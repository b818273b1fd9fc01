// A created or rotated secret, shown once with a copy button; the page forgets it when dismissed.
import { CopyButton } from '../components.tsx';

export function SecretOnce({ title, secret, note, onDone }: { title: string; secret: string; note?: string; onDone: () => void }) {
  return (
    <section class="secret" aria-labelledby="secret-heading" role="status">
      <h2 id="secret-heading">{title}</h2>
      <p>This secret is shown once: copy it now. Herd stores only its hash.</p>
      <p>
        <code id="secret-value" class="secret-value">
          {secret}
        </code>
      </p>
      <CopyButton text={secret} label="Copy secret" targetId="secret-value" />
      {note && <p class="muted">{note}</p>}
      <p>
        <button type="button" onClick={onDone}>
          Done, hide the secret
        </button>
      </p>
    </section>
  );
}
