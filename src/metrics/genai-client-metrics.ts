// The OpenTelemetry GenAI client metrics on the Prometheus endpoint, one sample per upstream attempt:
// gen_ai.client.operation.duration (s) and gen_ai.client.token.usage ({token}), named as Prometheus names
// OpenTelemetry's (dots to underscores, the unit appended), labelled as the semantic conventions say.
import { Histogram, type Registry } from 'prom-client';

/** One finished attempt (the gateway's AttemptMeasure fits). */
export interface GenAiAttemptSample {
  operation: string;
  provider: string;
  requestModel: string;
  responseModel: string | undefined;
  seconds: number;
  errorType: string | undefined;
  usage: { promptTokens: number; completionTokens: number } | undefined;
}

/** The conventions' advised bucket boundaries. */
const DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92];
const TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864];

const LABELS = ['gen_ai_operation_name', 'gen_ai_provider_name', 'gen_ai_request_model', 'gen_ai_response_model'] as const;

/**
 * Registers both families; the returned function records an attempt. Models are upstream ids from herd.yaml's
 * deployments and what upstreams answer: bounded by the configuration and the upstreams' own model sets.
 */
export function registerGenAiClientMetrics(registry: Registry): (sample: GenAiAttemptSample) => void {
  const duration = new Histogram({
    name: 'gen_ai_client_operation_duration_seconds',
    help: 'GenAI operation duration: one upstream attempt, to its answer or, streaming, to the stream end (gen_ai.client.operation.duration)',
    labelNames: [...LABELS, 'error_type'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const tokens = new Histogram({
    name: 'gen_ai_client_token_usage',
    help: 'Tokens used per upstream attempt, by gen_ai_token_type input or output (gen_ai.client.token.usage, unit {token})',
    labelNames: [...LABELS, 'gen_ai_token_type'],
    buckets: TOKEN_BUCKETS,
    registers: [registry],
  });
  // The label sets repeat (a few models, providers and outcomes): each one's children are made once and kept, so
  // an attempt costs three observe() calls, not three label objects hashed by prom-client.
  type Children = { duration: Histogram.Internal<string>; input: Histogram.Internal<string>; output: Histogram.Internal<string> };
  const children = new Map<string, Children>();
  return (sample) => {
    const response = sample.responseModel ?? '';
    const error = sample.errorType ?? '';
    const key = `${sample.operation}\n${sample.provider}\n${sample.requestModel}\n${response}\n${error}`;
    let c = children.get(key);
    if (c === undefined) {
      const labels = [sample.operation, sample.provider, sample.requestModel, response];
      c = { duration: duration.labels(...labels, error), input: tokens.labels(...labels, 'input'), output: tokens.labels(...labels, 'output') };
      children.set(key, c);
    }
    c.duration.observe(sample.seconds);
    if (sample.usage !== undefined) {
      c.input.observe(sample.usage.promptTokens);
      c.output.observe(sample.usage.completionTokens);
    }
  };
}
