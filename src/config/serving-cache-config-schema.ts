// herd.yaml's `serving.cache`: Triton's server-wide response cache (tritonserver --cache-config), used by
// models whose config.pbtxt sets `response_cache { enable: true }`. One implementation at a time, as in Triton.
import { z } from 'zod';

export const localServingCacheSchema = z
  .strictObject({
    size: z.number().int().positive().describe("Bytes the 'local' cache may hold (tritonserver --cache-config local,size=BYTES); least recently used responses are evicted first"),
  })
  .describe("Triton's in-process 'local' cache");

export const redisServingCacheSchema = z
  .strictObject({
    host: z.string().min(1).describe('Redis host (--cache-config redis,host=...)'),
    port: z.number().int().min(1).max(65535).describe('Redis port (--cache-config redis,port=...)'),
    user: z.string().min(1).optional().describe('Redis ACL user name (--cache-config redis,user=...)'),
    password_env: z.string().min(1).optional().describe('Name of the environment variable holding the Redis password; the password itself never goes in a file or a flag'),
    db: z.number().int().min(0).default(0).describe('Redis database number (--cache-config redis,db=...)'),
    connect_timeout: z.number().int().min(0).default(0).describe('Milliseconds to wait for the connection, 0 = no limit (as the redis_cache option)'),
    socket_timeout: z.number().int().min(0).default(0).describe('Milliseconds to wait for one command; a slower Redis counts as a miss (0 = no limit)'),
    tls_enabled: z.boolean().default(false).describe('Connect with TLS (--cache-config redis,tls_enabled=true)'),
    key_prefix: z.string().default('herd:infer:').describe('Prefix of every key Herd writes, so several servers or tests can share one Redis'),
  })
  .describe("Triton's 'redis' cache: responses shared by every replica that points at the same Redis");

export const servingCacheSchema = z
  .strictObject({
    local: localServingCacheSchema.optional(),
    redis: redisServingCacheSchema.optional(),
  })
  .superRefine((cache, ctx) => {
    if (cache.local && cache.redis) {
      ctx.addIssue({ code: 'custom', message: 'only one response cache implementation can be configured: local or redis, not both (as tritonserver)' });
    }
  })
  .describe('The response cache of the serving side; absent: no cache, and response_cache { enable: true } caches nothing (as in Triton)');

export type ServingCacheConfig = z.infer<typeof servingCacheSchema>;
