// Small shared pieces: error and loading notes, a copy button, a pager, a stat list and a JSON block.
import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';

/** An API error in words (never a blank page); role=alert so screen readers hear it. */
export function ErrorNote({ error }: { error: string | undefined }) {
  if (!error) return null;
  return (
    <p class="error" role="alert">
      {error}
    </p>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p class="muted" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/** Loading, the error, or the content once there is data. */
export function Loaded<T>({ state, what, children }: { state: { data: T | undefined; error: string | undefined }; what: string; children: (data: T) => ComponentChildren }) {
  return (
    <>
      <ErrorNote error={state.error} />
      {state.data === undefined ? !state.error && <Loading what={what} /> : children(state.data)}
    </>
  );
}

/** Copies text to the clipboard; falls back to selecting it where the clipboard API is not offered (plain http). */
export function CopyButton({ text, label, targetId }: { text: string; label: string; targetId?: string }) {
  const [done, setDone] = useState('');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setDone('Copied');
    } catch {
      const target = targetId ? document.getElementById(targetId) : null;
      if (target) window.getSelection()?.selectAllChildren(target);
      setDone('Selected: press Ctrl+C to copy');
    }
  };
  return (
    <>
      <button type="button" onClick={copy}>
        {label}
      </button>
      <span class="muted" aria-live="polite">
        {' '}
        {done}
      </span>
    </>
  );
}

/** Cursor pagination: a stack of the cursors that led here, so Previous works without the server's help. */
export function Pager({ cursors, next, onChange }: { cursors: string[]; next: string | null | undefined; onChange: (cursors: string[]) => void }) {
  return (
    <nav class="pager" aria-label="Pages">
      <button type="button" disabled={cursors.length === 0} onClick={() => onChange(cursors.slice(0, -1))}>
        Previous page
      </button>
      <span class="muted">Page {cursors.length + 1}</span>
      <button type="button" disabled={!next} onClick={() => next && onChange([...cursors, next])}>
        Next page
      </button>
    </nav>
  );
}

export function Stats({ items }: { items: [string, ComponentChildren][] }) {
  return (
    <dl class="stats">
      {items.map(([name, value]) => (
        <div key={name}>
          <dt>{name}</dt>
          <dd>{value}</dd>
        </div>
      ))}
    </dl>
  );
}

export function JsonBlock({ value, summary }: { value: unknown; summary: string }) {
  return (
    <details>
      <summary>{summary}</summary>
      <pre>{JSON.stringify(value, null, 2)}</pre>
    </details>
  );
}

export function Badge({ tone, children }: { tone: 'ok' | 'warn' | 'bad' | 'plain'; children: ComponentChildren }) {
  return <span class={`badge ${tone}`}>{children}</span>;
}

/** The page's one h1, also the document title. */
export function Heading({ children }: { children: string }) {
  useEffect(() => {
    document.title = `${children} · Herd console`;
  }, [children]);
  return <h1>{children}</h1>;
}

/** A table body with nothing to show says so. */
export function EmptyRow({ columns, text = 'None yet.' }: { columns: number; text?: string }) {
  return (
    <tr>
      <td colSpan={columns} class="muted">
        {text}
      </td>
    </tr>
  );
}

/**
 * A wide table's horizontal scroller, reachable by keyboard: the WAI pattern for a scrollable region
 * (a named section, a region, with tabIndex 0), which axe's scrollable-region-focusable rule asks for.
 */
export function ScrollRegion({ label, children }: { label: string; children: ComponentChildren }) {
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must take focus for keyboard users to scroll it
    <section class="scroll" aria-label={label} tabIndex={0}>
      {children}
    </section>
  );
}
