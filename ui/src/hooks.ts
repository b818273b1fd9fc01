// Data hooks: load once, or poll while the tab is visible (a hidden tab costs the server nothing).
import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { messageOf } from './api.ts';

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * Runs `load` now, whenever `deps` change, on reload(), and every `intervalMs` while the document is
 * visible (0: never again). A failed poll keeps the last data and shows the error beside it.
 */
export function useLoad<T>(load: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[], intervalMs = 0): Loaded<T> {
  const [data, setData] = useState<T | undefined>(undefined);
  const [error, setError] = useState<string | undefined>(undefined);
  const [loading, setLoading] = useState(true);
  const [tick, setTick] = useState(0);
  const loadRef = useRef(load);
  loadRef.current = load;

  // deps are the caller's inputs to load; tick forces a reload.
  useEffect(() => {
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    let running = false;
    const run = async () => {
      timer = undefined;
      if (document.hidden && intervalMs > 0) return;
      running = true;
      try {
        const value = await loadRef.current(controller.signal);
        if (stopped) return;
        setData(value);
        setError(undefined);
      } catch (caught) {
        if (stopped || (caught instanceof DOMException && caught.name === 'AbortError')) return;
        setError(messageOf(caught));
      }
      running = false;
      setLoading(false);
      if (intervalMs > 0 && !stopped) timer = setTimeout(run, intervalMs);
    };
    const onVisibility = () => {
      if (!document.hidden && timer === undefined && !running && intervalMs > 0) void run();
    };
    setLoading(true);
    void run();
    document.addEventListener('visibilitychange', onVisibility);
    return () => {
      stopped = true;
      controller.abort();
      if (timer !== undefined) clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    };
  }, [...deps, tick, intervalMs]);

  const reload = useCallback(() => setTick((n) => n + 1), []);
  return { data, error, loading, reload };
}

/** An action's state: running, its error, and a runner that catches. */
export function useAction(): { busy: boolean; error: string | undefined; run: (action: () => Promise<void>) => Promise<void>; clear: () => void } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | undefined>(undefined);
  const run = useCallback(async (action: () => Promise<void>) => {
    setBusy(true);
    setError(undefined);
    try {
      await action();
    } catch (caught) {
      setError(messageOf(caught));
    } finally {
      setBusy(false);
    }
  }, []);
  return { busy, error, run, clear: () => setError(undefined) };
}
