// Shared configs for billing tests: examples/herd.yaml's providers and models (relay at ¥1/$,
// official APIs at ¥7.3/$), validated by the real schemas, with an optional billing section.
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import { billingConfigSchema, checkBillingConfig, type BillingConfig } from '../../../src/config/billing-config-schema.ts';
import { gatewayConfigShape, checkGatewayConfig, type GatewayConfig } from '../../../src/config/gateway-config-schema.ts';

export const PROVIDERS_AND_MODELS = `
providers:
  holysheep: { type: openai, exchange_rate: 1.0 }
  openai:    { type: openai, exchange_rate: 7.3 }
  anthropic: { type: anthropic, exchange_rate: 7.3 }
  gemini:    { type: gemini, exchange_rate: 7.3 }
  deepseek:  { type: openai, exchange_rate: 7.3 }
models:
  gpt-4.1:
    aliases: [gpt4]
    price: { input: 2.00, cached_input: 0.50, output: 8.00 }
    deployments: [{ provider: holysheep }, { provider: openai }]
  claude-sonnet-4.5:
    aliases: [claude-sonnet-4-5]
    price: { input: 3.00, cached_input: 0.30, cache_write: 3.75, output: 15.00 }
    deployments:
      - { provider: holysheep, upstream_model: claude-sonnet-4-5 }
      - { provider: anthropic, upstream_model: claude-sonnet-4-5 }
  gemini-2.5-flash:
    price: { input: 0.30, output: 2.50 }
    deployments: [{ provider: holysheep }, { provider: gemini }]
  deepseek-v3.2:
    price: { input: 0.28, cached_input: 0.028, output: 0.42 }
    deployments: [{ provider: holysheep }, { provider: deepseek, upstream_model: deepseek-chat }]
routes:
  tiers: { fast: gemini-2.5-flash, balanced: deepseek-v3.2, quality: claude-sonnet-4.5, advanced: gpt-4.1 }
  auto:
    - { max_prompt_tokens: 500, tier: fast }
    - { tier: quality }
`;

const testConfigSchema = z.strictObject({ ...gatewayConfigShape, billing: billingConfigSchema.prefault({}) }).superRefine((c, ctx) => {
  checkGatewayConfig(c, ctx);
  checkBillingConfig(c, ctx);
});

export type TestConfig = GatewayConfig & { billing: BillingConfig };

/** The gateway sections above plus `extra` YAML (e.g. a billing section), parsed as herd.yaml would be once billing is merged. */
export function billingTestConfig(extra = ''): TestConfig {
  return testConfigSchema.parse(parseYaml(`${PROVIDERS_AND_MODELS}\n${extra}`)) as TestConfig;
}

export function parseTestConfig(yaml: string) {
  return testConfigSchema.safeParse(parseYaml(yaml));
}
