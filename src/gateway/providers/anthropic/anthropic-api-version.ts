// The anthropic-version header Herd sends on every Anthropic call (Messages and Message Batches alike).
export const ANTHROPIC_VERSION = '2023-06-01';
