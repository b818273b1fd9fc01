// A finished OpenAI batch's output and error files, one JSONL line per request as OpenAI documents them: answers
// (2xx) in the output file; error answers, and requests cancelled or expired before they ran, in the error file.
import type { BatchLine } from './batch-store.ts';

const NOT_RUN = {
  canceled: { code: 'batch_cancelled', message: 'This request was not executed because the batch was cancelled.' },
  expired: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
} as const;

/** Which file a terminal line belongs in. */
export function outputFileOf(line: BatchLine): 'output' | 'error' {
  return line.result?.outcome === 'succeeded' ? 'output' : 'error';
}

export function formatOutputLine(line: BatchLine): string {
  const id = `batch_req_${line.requestId.replaceAll('-', '')}`;
  const result = line.result;
  if (result === undefined || !('statusCode' in result)) {
    const error = NOT_RUN[result?.outcome ?? 'expired'];
    return `${JSON.stringify({ id, custom_id: line.customId, response: null, error })}\n`;
  }
  const response = { status_code: result.statusCode, request_id: line.requestId, body: result.body };
  return `${JSON.stringify({ id, custom_id: line.customId, response, error: null })}\n`;
}
