// What the batch validator's tests share: a catalog with chat and embedding models and prices, a real
// BillingService on a throwaway SQLite ledger, each endpoint's real ingress decoder, and byte sources in chunks.
import { BATCH_LINE_DECODERS } from '../../../src/http/batch-line-decoders.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import { BillingService } from '../../../src/gateway/billing/billing-service.ts';
import type { Ledger } from '../../../src/gateway/billing/ledger.ts';
import { openLedger } from '../../../src/gateway/billing/open-ledger.ts';
import { readAnthropicRequests } from '../../../src/gateway/batch/anthropic-requests-line-source.ts';
import { readJsonlLines } from '../../../src/gateway/wire/jsonl-line-source.ts';
import { validateBatchFile, type BatchFormat, type BatchValidation, type ValidBatchLine } from '../../../src/gateway/batch/validate-batch-file.ts';
import { createBatchLineCheck } from '../../../src/gateway/batch/validate-batch-line.ts';
import { isModelAllowed } from '../../../src/gateway/keys/is-model-allowed.ts';
import type { KeyInfo } from '../../../src/gateway/keys/key-store.ts';
import { buildGatewayCatalog, type GatewayCatalog } from '../../../src/gateway/router/gateway-catalog.ts';
import { testKey } from '../billing/budget-fixtures.ts';

export const AT_MS = Date.parse('2026-12-01T00:00:00Z');

const CONFIG = `
providers:
  relay:  { type: openai, base_url: "http://127.0.0.1:9/v1", api_key_env: RELAY_KEY }
  direct: { type: anthropic, base_url: "http://127.0.0.1:9", api_key_env: DIRECT_KEY }
models:
  gpt-4.1:
    aliases: [gpt4]
    max_output_tokens: 1000
    price: { input: 2.00, output: 8.00 }
    deployments: [{ provider: relay }]
  claude-sonnet-4.5:
    max_output_tokens: 2000
    price: { input: 3.00, output: 15.00 }
    deployments: [{ provider: relay }, { provider: direct, upstream_model: claude-sonnet-4-5 }]
  emb:
    kind: embedding
    price: { input: 0.10, output: 0 }
    deployments: [{ provider: relay }]
routes:
  tiers: { fast: gpt-4.1 }
billing: { currency: USD }
`;

/** Each batch endpoint's realtime decoder, as the transport hands them to the validator. */
export const DECODERS = BATCH_LINE_DECODERS;

export interface Fixture {
  catalog: GatewayCatalog;
  billing: BillingService;
  close(): Promise<void>;
}

export async function openFixture(): Promise<Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'herd-batch-validate-'));
  const config = parseHerdConfig(CONFIG, join(dir, 'herd.yaml'), {});
  const ledger: Ledger = await openLedger(`sqlite:${join(dir, 'ledger.db')}`);
  return {
    catalog: buildGatewayCatalog(config, { RELAY_KEY: 'k', DIRECT_KEY: 'k' }),
    billing: new BillingService({ config, ledger, now: () => AT_MS }),
    async close() {
      await ledger.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const key = (extra: Partial<KeyInfo> = {}): KeyInfo => testKey({ id: 'hk_batch', name: 'batch', prefix: 'sk-herd-b', ...extra });

/** `bytes` in pieces of `size` bytes (the last shorter), as a file stream might cut them. */
export async function* inChunks(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

/** Pieces cut at the given offsets. */
export async function* cutAt(bytes: Buffer, cuts: readonly number[]): AsyncGenerator<Buffer> {
  let from = 0;
  for (const cut of cuts) {
    yield bytes.subarray(from, cut);
    from = cut;
  }
  yield bytes.subarray(from);
}

export interface RunOptions {
  format?: BatchFormat;
  endpoint?: string;
  key?: KeyInfo;
  maxLineBytes?: number;
  maxRequests?: number;
  costLimitMicros?: number;
  promptCount?: 'exact' | 'upper-bound';
  /** Return false to stop collecting lines (the big file keeps none). */
  onLine?: (line: ValidBatchLine) => void;
}

/** The validator as submission runs it: a line source over `source`, each body checked as its endpoint would. */
export async function runValidation(fixture: Fixture, source: AsyncIterable<Buffer>, options: RunOptions = {}): Promise<{ result: BatchValidation; lines: ValidBatchLine[] }> {
  const format = options.format ?? 'openai';
  const endpoint = options.endpoint ?? (format === 'openai' ? '/v1/chat/completions' : '/v1/messages');
  const maxLineBytes = options.maxLineBytes ?? 1 << 20;
  const records = format === 'openai' ? readJsonlLines(source, { maxLineBytes }) : readAnthropicRequests(source, { maxLineBytes });
  const checkBody = createBatchLineCheck({
    catalog: fixture.catalog,
    decode: DECODERS[endpoint]!,
    allowModel: isModelAllowed,
    pricing: fixture.billing,
    promptCount: options.promptCount ?? 'exact',
    atMs: AT_MS,
  });
  const lines: ValidBatchLine[] = [];
  const result = await validateBatchFile({
    records,
    format,
    endpoint,
    key: options.key ?? key(),
    checkBody,
    onLine: options.onLine ?? ((line) => void lines.push(line)),
    maxRequests: options.maxRequests,
    costLimitMicros: options.costLimitMicros,
  });
  return { result, lines };
}

/** One OpenAI batch line. */
export function openaiLine(customId: string, body: Record<string, unknown>, extra: Record<string, unknown> = {}): string {
  return JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/chat/completions', body, ...extra });
}

export const chatBody = (content: string, model = 'gpt-4.1', extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content }], ...extra });
