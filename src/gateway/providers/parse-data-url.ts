// `data:<media type>;base64,<data>` image URLs, the only inline form OpenAI clients send.
import { HerdError } from '../../core/errors.ts';

export interface InlineData {
  mediaType: string;
  base64: string;
}

/** undefined for http(s) URLs; an INVALID_ARG error for a data: URL that is not base64 with a type. */
export function parseDataUrl(url: string, param: string): InlineData | undefined {
  if (!url.startsWith('data:')) return undefined;
  const comma = url.indexOf(',');
  const header = comma === -1 ? '' : url.slice(5, comma);
  const match = /^([\w.+-]+\/[\w.+-]+);base64$/i.exec(header);
  if (match === null) {
    throw new HerdError('INVALID_ARG', `Invalid '${param}': expected data:<media type>;base64,<data>`, { param });
  }
  return { mediaType: match[1].toLowerCase(), base64: url.slice(comma + 1) };
}
