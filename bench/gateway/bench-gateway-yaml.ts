// The herd.yaml both gateway benchmarks run: one OpenAI-compatible provider (the mock, or nothing), gpt-4.1 priced as
// the seeds list it, the master key from HERD_BENCH_MASTER, a ledger where asked.
export interface BenchGatewayYaml {
  /** The provider's base URL, e.g. the mock's `http://127.0.0.1:PORT/v1`. */
  baseUrl: string;
  /** billing.ledger: `off`, `sqlite:PATH`. */
  ledger: string;
  /** auth.db. */
  authDb: string;
  /** The variable holding the provider's key. */
  upstreamKeyEnv: string;
  /** Adds the server section (ports chosen by the OS) for `herd serve`. */
  server?: boolean;
}

export function createBenchGatewayYaml(options: BenchGatewayYaml): string {
  return `${options.server ? 'server: { host: 127.0.0.1, http_port: 0, grpc_port: 0, metrics_port: 0 }\n' : ''}auth: { master_key_env: HERD_BENCH_MASTER, db: ${options.authDb} }
billing: { ledger: "${options.ledger}" }
providers:
  bench: { type: openai, base_url: "${options.baseUrl}", api_key_env: ${options.upstreamKeyEnv}, exchange_rate: 1.0 }
models:
  gpt-4.1:
    price: { input: 2.00, cached_input: 0.50, output: 8.00 }
    deployments: [{ provider: bench }]
`;
}
