// The model ids in an upstream's own model list: OpenAI's and Anthropic's `{data: [{id}]}`, Gemini's
// `{models: [{name: 'models/…'}]}` (prefix dropped, as deployments name them). Malformed members are skipped.
import { isJsonObject } from '../protocol/check-json-value.ts';

export function parseUpstreamModelList(body: unknown): string[] | undefined {
  if (!isJsonObject(body)) return undefined;
  const ids: string[] = [];
  if (Array.isArray(body.data)) {
    for (const item of body.data) if (isJsonObject(item) && typeof item.id === 'string' && item.id !== '') ids.push(item.id);
    return ids;
  }
  if (Array.isArray(body.models)) {
    for (const item of body.models) {
      if (!isJsonObject(item) || typeof item.name !== 'string') continue;
      const id = item.name.startsWith('models/') ? item.name.slice('models/'.length) : item.name;
      if (id !== '') ids.push(id);
    }
    return ids;
  }
  return undefined;
}
