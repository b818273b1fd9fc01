// herd.yaml's `routes.affinity`: prompt-cache affinity, which sends a session's requests to the
// deployment that served it last so the upstream's prompt cache is warm (docs/gateway.md, "Prompt-cache affinity").
import { z } from 'zod';

export const affinityConfigSchema = z.strictObject({
  enabled: z
    .boolean()
    .default(true)
    .describe(
      "send a session's requests to the deployment of the model that served it last, while that deployment's breaker is closed and it admits the request; false: the strategy alone picks",
    ),
  prefix_kb: z
    .number()
    .int()
    .min(0)
    .default(8)
    .describe(
      'a request without a session header, Claude Code session or prompt_cache_key is identified by a hash of its opening: up to this many KiB of its tools and system messages, and as many of its first user message; 0: such requests have no identity',
    ),
  ttl_s: z
    .number()
    .int()
    .positive()
    .default(300)
    .describe("seconds a session stays with its deployment after its last request (a request asking for Anthropic's 1-hour cache_control.ttl: 3600)"),
  key_prefix: z.string().default('herd:affinity:').describe('prefix of the Redis keys when limits.redis or cache.redis shares affinity between replicas'),
});

export type AffinityConfig = z.infer<typeof affinityConfigSchema>;
