// herd.yaml's `cache` section: the exact-match response cache's memory tier, optional Redis tier
// (shared by replicas) and which requests are cached when the client does not say.
import { z } from 'zod';

const positiveInt = z.number().int().positive();

export const CACHE_MODES = ['deterministic', 'off'] as const;
export type CacheMode = (typeof CACHE_MODES)[number];

// `team` joins once keys belong to teams (issue 28).
export const CACHE_SCOPES = ['key', 'shared'] as const;
export type CacheScopeSetting = (typeof CACHE_SCOPES)[number];

export const memoryCacheSchema = z.strictObject({
  max_entries: positiveInt.default(10_000).describe("answers kept in this replica's memory"),
  ttl_s: positiveInt.default(300).describe("seconds an answer is served from this replica's memory after it was stored"),
  // The entry count alone does not bound memory: one long answer can weigh as much as a thousand short ones.
  max_bytes: positiveInt.default(64 * 1024 * 1024).describe('total size of the stored answers (their JSON) in bytes'),
});

export const redisCacheSchema = z.strictObject({
  url: z
    .string()
    .regex(/^rediss?:\/\/.+/, 'must be a redis:// or rediss:// URL')
    .describe('redis:// or rediss:// URL'),
  ttl_s: positiveInt.default(3600).describe('seconds an answer lives in Redis (and the longest any replica serves it)'),
  key_prefix: z.string().default('herd:cache:').describe('prefix of every cache key'),
  // The cache saves money; it must not add latency to a request that would have gone upstream anyway.
  timeout_ms: positiveInt.default(250).describe('longest wait for one Redis command; a slower Redis counts as a miss'),
});

export const cacheConfigSchema = z.strictObject({
  memory: memoryCacheSchema.prefault({}).describe('the memory tier, in front of Redis'),
  redis: redisCacheSchema.optional().describe("a tier shared by every replica; absent: memory only (one replica's answers are not seen by the others)"),
  default_mode: z
    .enum(CACHE_MODES)
    .default('deterministic')
    .describe('requests without an x-herd-cache header: deterministic caches those with temperature 0 and n 1; off caches nothing unless the client sends x-herd-cache: use'),
  scope: z
    .enum(CACHE_SCOPES)
    .default('key')
    .describe("who shares entries: key gives every gateway key its own (another key's identical request misses); shared lets every key hit every entry"),
});

/** Spread into herdConfigSchema, as gatewayConfigShape is. */
export const cacheConfigShape = {
  cache: cacheConfigSchema.prefault({}).describe('The exact-match response cache of the gateway.'),
};

export type CacheConfig = z.infer<typeof cacheConfigSchema>;
export type MemoryCacheConfig = CacheConfig['memory'];
export type RedisCacheConfig = z.infer<typeof redisCacheSchema>;
