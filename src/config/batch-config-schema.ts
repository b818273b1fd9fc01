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
        store: z
          .enum(['directory', 'database'])
          .default('directory')
          .describe(
            "where uploaded and produced files' bytes live: a folder (batch.files.dir; replicas must share it), or the ledger's database in 1 MiB chunks (replicas on PostgreSQL need nothing shared)",
          ),
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
    worker: z
      .strictObject({
        enabled: z.boolean().default(true).describe('run batch lines in this process (replicas share the work through leases); false: this replica only takes submissions'),
        interval_ms: z.number().int().positive().default(1000).describe('how often the worker looks for work when it found none the last time'),
        lease_ms: z.number().int().positive().default(120_000).describe("how long a claimed line or upstream batch is this replica's; past it another replica takes the work over"),
        claim_lines: z.number().int().positive().default(256).describe('lines claimed at a time'),
      })
      .prefault({})
      .describe('the lease loop that runs batch lines'),
    realtime: z
      .strictObject({
        concurrency: z
          .number()
          .int()
          .positive()
          .default(4)
          .describe('lines run as realtime requests (at BATCH priority) at once, per replica, for deployments without a batch API'),
      })
      .prefault({})
      .describe('lines run as realtime requests'),
    upstream: z
      .strictObject({
        providers: z
          .array(z.string().min(1))
          .optional()
          .describe('providers whose batch API is used (an empty list: none); default: every provider of type openai or anthropic whose batch discount is above 0'),
        max_lines: z.number().int().positive().optional().describe("most lines in one upstream batch; default and ceiling: the upstream's documented limit"),
        max_bytes: z.number().int().positive().optional().describe("most bytes in one upstream batch; default and ceiling: the upstream's documented limit"),
        max_wait_ms: z
          .number()
          .int()
          .nonnegative()
          .default(60_000)
          .describe('an upstream batch goes up when it is full or its oldest line has waited this long (lines of every client batch for the same deployment share it)'),
        poll_min_ms: z.number().int().positive().default(5000).describe('first wait before polling an upstream batch; doubled after each poll that finds it running'),
        poll_max_ms: z.number().int().positive().default(300_000).describe('longest wait between polls'),
      })
      .prefault({})
      .describe("aggregation of lines into upstream batch APIs (OpenAI's Batch API, Anthropic's Message Batches)"),
    deadline: z
      .strictObject({
        policy: z
          .enum(['expire', 'realtime'])
          .default('expire')
          .describe(
            "lines not answered when a batch's completion window is about to end: expire them (as OpenAI and Anthropic do; they cost nothing) or run them realtime (full price)",
          ),
        margin_ms: z
          .number()
          .int()
          .nonnegative()
          .default(3_600_000)
          .describe('how long before expires_at the policy applies to lines not yet answered (and no line is sent upstream any more)'),
      })
      .prefault({})
      .describe("what happens at a batch's completion window"),
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
