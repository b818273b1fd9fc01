// One entry of GET /v1/models: what every dialect's model list is built from.

/** An OpenAI `model` object plus Herd's own details under `herd`. */
export interface ModelListEntry {
  id: string;
  object: 'model';
  created: number;
  /** The provider that serves it first (config order); `herd` for routes (tiers, auto). */
  owned_by: string;
  herd: {
    kind: 'model' | 'tier' | 'auto' | 'pattern';
    /** Enabled providers serving it (for a tier: its target's). */
    providers: string[];
    aliases?: string[];
    context_window?: number;
    /** For a tier or a pattern: the model it routes to. */
    target?: string;
    /** For an id an upstream listed: the routes.patterns glob it matched. */
    pattern?: string;
  };
}
