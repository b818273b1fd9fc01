// --cache-config as tritonserver parses it: <cache>,<setting>=<value>, one setting per flag, repeatable.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseCacheConfigFlags } from '../../src/cli/parse-cache-config-flags.ts';
import { resolveServeConfig } from '../../src/cli/serve-command.ts';

test('local,size=BYTES', () => {
  assert.deepEqual(parseCacheConfigFlags(['local,size=1048576']), { local: { size: 1048576 } });
});

test('redis settings accumulate over repeated flags, with the redis_cache defaults', () => {
  assert.deepEqual(parseCacheConfigFlags(['redis,host=127.0.0.1', 'redis,port=6379', 'redis,db=2', 'redis,username=herd', 'redis,tls_enabled=true']), {
    redis: { host: '127.0.0.1', port: 6379, db: 2, user: 'herd', tls_enabled: true, connect_timeout: 0, socket_timeout: 0, key_prefix: 'herd:infer:' },
  });
});

test("tritonserver's format errors, and Herd's own refusals", () => {
  assert.throws(() => parseCacheConfigFlags(['size=10']), /No cache specified. --cache-config option format is <cache name>,<setting>=<value>. Got size=10/);
  assert.throws(() => parseCacheConfigFlags(['local,size']), /--cache-config option format is '<cache name>,<setting>=<value>'. Got local,size/);
  assert.throws(() => parseCacheConfigFlags(['local,size=']), /Got local,size=/);
  assert.throws(() => parseCacheConfigFlags(['memcached,size=1']), /unknown cache 'memcached'/);
  assert.throws(() => parseCacheConfigFlags(['local,size=big']), /size must be an integer/);
  assert.throws(() => parseCacheConfigFlags(['local,size=0']), /--cache-config: .*\(local\.size\)/);
  assert.throws(() => parseCacheConfigFlags(['local,colour=red']), /--cache-config: .*colour/);
  assert.throws(() => parseCacheConfigFlags(['redis,host=h']), /\(redis\.port\)/);
  assert.throws(() => parseCacheConfigFlags(['local,size=10', 'redis,host=h', 'redis,port=1']), /only one response cache implementation/);
  assert.throws(() => parseCacheConfigFlags(['redis,password=secret']), /password_env=NAME/);
});

test('herd serve --cache-config sets serving.cache', () => {
  const config = resolveServeConfig({ modelRepository: ['examples/model_repository'], cacheConfig: ['local,size=4096'] });
  assert.deepEqual(config.serving.cache, { local: { size: 4096 } });
});
