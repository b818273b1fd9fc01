// herd.yaml's `batch` section: the OpenAI Files and Batch APIs' store. Batch state lives in the ledger's
// database and input files in a folder, so the section only takes effect with billing.ledger set.
import { z } from 'zod';

/** OpenAI's documented limit for a Batch API input file. */
export const DEFAULT_BATCH_FILE_MAX_BYTES = 200 * 1024 * 1024;
/** OpenAI's documented limit of requests in one batch. */
export const DEFAULT_BATCH_MAX_LINES = 50_000;

export const batchConfigSchema = z
  .strictObject({
    enabled: z
      .boolean()
      .optional()
      .describe('serve /v1/files (and the batch APIs built on it); default: on when billing.ledger is not off, and true with billing.ledger: off is an error'),
    files: z
      .strictObject({
        dir: z
          .string()
          .min(1)
          .optional()
          .describe(
            'the folder (relative to herd.yaml) holding uploaded batch files; default: files/ beside a SQLite ledger, data/files in the working directory with PostgreSQL (replicas need it shared)',
          ),
        max_bytes: z.number().int().positive().default(DEFAULT_BATCH_FILE_MAX_BYTES).describe("largest file POST /v1/files accepts, in bytes (OpenAI's 200 MB for batch files)"),
        ttl_days: z
          .number()
          .positive()
          .default(30)
          .describe("a file's expires_at, days after its upload, when the upload sets no expires_after (OpenAI's 30 days for batch files)"),
      })
      .prefault({})
      .describe('uploaded files'),
    max_lines: z
      .number()
      .int()
      .positive()
      .default(DEFAULT_BATCH_MAX_LINES)
      .describe("requests (non-empty lines) one batch input file may hold; a longer upload is refused while it streams (OpenAI's 50,000)"),
  })
  .prefault({})
  .describe('Batch work (docs/batches.md): uploaded files and batches, stored in the ledger database.');

export type BatchConfig = z.infer<typeof batchConfigSchema>;

interface IssueSink {
  addIssue(issue: { code: 'custom'; path: (string | number)[]; message: string }): void;
}

/** Pair with herdConfigSchema's superRefine: batches need the ledger's database. */
export function checkBatchConfig(config: { batch: BatchConfig; billing: { ledger: string } }, ctx: IssueSink): void {
  if (config.batch.enabled === true && config.billing.ledger === 'off') {
    ctx.addIssue({ code: 'custom', path: ['batch', 'enabled'], message: 'needs billing.ledger: batches and files are kept in the ledger database' });
  }
}

/** Whether /v1/files is served: on by default wherever a ledger is. */
export function isBatchEnabled(config: { batch: BatchConfig; billing: { ledger: string } }): boolean {
  return config.billing.ledger !== 'off' && config.batch.enabled !== false;
}
