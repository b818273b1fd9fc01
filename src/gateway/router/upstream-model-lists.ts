// Each provider's own model list, for GET /v1/models under pattern routes: fetched on first need, kept
// for a TTL, refreshed in the background once stale, and never waited on for longer than a short bound.
import { LightAbortController } from '../../core/abort-link.ts';
import type { Clock, Timer } from '../../core/clock.ts';
import type { Provider } from '../providers/provider.ts';
import { escapeLogText } from '../../core/escape-log-text.ts';

export interface UpstreamModelListsOptions {
  clock: Clock;
  /** How long a fetched list is served before it is fetched again. */
  ttlMs?: number;
  /** The longest a listing waits for a list never fetched before; later it answers with what it has. */
  waitMs?: number;
  /** Per fetch; an upstream slower than this counts as failed. */
  timeoutMs?: number;
  /** After a failure, how long before the next try (the previous list, if any, is served meanwhile). */
  retryMs?: number;
  log?: (line: string) => void;
}

interface Entry {
  ids: readonly string[];
  /** Whether a list ever arrived (until then a listing waits for one, briefly). */
  loaded: boolean;
  /** clock time after which the list is fetched again. */
  staleAt: number;
  loading: Promise<void> | undefined;
}

const DEFAULTS = { ttlMs: 10 * 60_000, waitMs: 2_000, timeoutMs: 5_000, retryMs: 60_000 };

export class UpstreamModelLists {
  private readonly entries = new Map<string, Entry>();
  private readonly settings: typeof DEFAULTS;

  constructor(private readonly options: UpstreamModelListsOptions) {
    this.settings = {
      ttlMs: options.ttlMs ?? DEFAULTS.ttlMs,
      waitMs: options.waitMs ?? DEFAULTS.waitMs,
      timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
      retryMs: options.retryMs ?? DEFAULTS.retryMs,
    };
  }

  /** The ids `provider` lists: cached; empty for a provider without listModels or whose list never came. */
  async get(provider: Provider): Promise<readonly string[]> {
    const list = provider.listModels?.bind(provider);
    if (list === undefined) return [];
    let entry = this.entries.get(provider.name);
    if (entry === undefined) {
      entry = { ids: [], loaded: false, staleAt: 0, loading: undefined };
      this.entries.set(provider.name, entry);
    }
    if (this.options.clock.now() >= entry.staleAt && entry.loading === undefined) this.refresh(provider.name, entry, list);
    // Until a list first arrives, a listing waits a little for it; a slow upstream finishes in the background.
    if (!entry.loaded && entry.loading !== undefined) await this.bounded(entry.loading);
    return entry.ids;
  }

  private async bounded(loading: Promise<void>): Promise<void> {
    let timer: Timer | undefined;
    await Promise.race([loading, new Promise<void>((resolve) => (timer = this.options.clock.setTimer(resolve, this.settings.waitMs)))]);
    timer?.cancel();
  }

  private refresh(name: string, entry: Entry, list: NonNullable<Provider['listModels']>): void {
    entry.loading = list(new LightAbortController().signal, this.settings.timeoutMs)
      .then(
        (ids) => {
          entry.ids = ids;
          entry.loaded = true;
          entry.staleAt = this.options.clock.now() + this.settings.ttlMs;
        },
        (err: unknown) => {
          entry.staleAt = this.options.clock.now() + this.settings.retryMs;
          this.options.log?.(`model list of ${name}: ${escapeLogText(err instanceof Error ? err.message : String(err))}`);
        },
      )
      .finally(() => {
        entry.loading = undefined;
      });
  }
}
