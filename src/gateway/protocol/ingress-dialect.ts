// The wire format a client spoke to the gateway: recorded in the ledger row, and compared with the
// upstream's dialect to choose byte pass-through or translation through the canonical shape.
export type IngressDialect = 'openai-chat' | 'anthropic-messages' | 'openai-responses' | 'openai-completions' | 'openai-embeddings';
