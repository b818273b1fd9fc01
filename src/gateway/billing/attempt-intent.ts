// An attempt about to be sent upstream, as the ledger spools it before the call (ledger-intents.ts):
// its own module so the Ledger contract can name it without importing the spooling code.

export interface AttemptIntent {
  requestId: string;
  attempt: number;
  keyId: string;
  requestedModel: string;
  model: string;
  provider: string;
  upstreamModel: string;
  startedAt: number;
}
