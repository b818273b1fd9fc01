import type { ModelListEntry } from '../../protocol/model-list-entry.ts';
// GET /v1/models in Anthropic's list shape, for clients that speak Anthropic (Claude Code reads it):
// {data: [{type: 'model', id, display_name, created_at}], has_more, first_id, last_id}.

export interface MessagesModelList {
  data: Array<{ type: 'model'; id: string; display_name: string; created_at: string }>;
  has_more: false;
  first_id: string | null;
  last_id: string | null;
}

export function convertModelsToMessagesList(models: readonly ModelListEntry[]): MessagesModelList {
  const data = models.map((m) => ({ type: 'model' as const, id: m.id, display_name: m.id, created_at: new Date(m.created * 1000).toISOString() }));
  return { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null };
}
