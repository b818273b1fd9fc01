// Settings an upstream has no equivalent for are dropped with a warning the caller can surface
// (never silently): one ProviderWarning per setting the request actually used.
import type { ChatRequest } from '../protocol/chat-types.ts';
import type { ProviderWarning } from './provider.ts';

export function collectUnsupportedWarnings(request: ChatRequest, params: ReadonlyArray<keyof ChatRequest>, upstream: string): ProviderWarning[] {
  const warnings: ProviderWarning[] = [];
  for (const param of params) {
    if (request[param] !== undefined) warnings.push({ param, message: `${upstream} does not support '${param}'; it was not sent` });
  }
  return warnings;
}
