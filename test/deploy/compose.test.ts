// deploy/compose.yaml checked offline (no container daemon here): the services and their order (migrate once,
// then the replicas), healthchecks, read-only Herd containers, HAProxy's config by `haproxy -c` when installed,
// and the command lines against the real CLI.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { unknownFlags } from './helpers/deploy-files.ts';

type Service = {
  image?: string;
  build?: { context: string; target?: string };
  command?: string[];
  depends_on?: Record<string, { condition: string }>;
  healthcheck?: { test?: string[]; disable?: boolean; start_period?: string };
  read_only?: boolean;
  user?: string;
  cap_drop?: string[];
  tmpfs?: string[];
  volumes?: string[];
  environment?: Record<string, string>;
  deploy?: { replicas?: number };
  stop_grace_period?: string;
  networks?: string[] | Record<string, { ipv4_address?: string }>;
};
const compose = parse(readFileSync('deploy/compose.yaml', 'utf8'), { merge: true }) as { services: Record<string, Service>; secrets?: Record<string, { file: string }> };
const services = compose.services;

test('compose: PostgreSQL, Redis, a one-shot migrate, two Herd replicas and HAProxy', () => {
  assert.deepEqual(Object.keys(services).sort(), ['haproxy', 'herd', 'migrate', 'postgres', 'redis']);
  assert.equal(services.herd?.deploy?.replicas, 2);
  assert.deepEqual(services.migrate?.command, ['herd', 'migrate', '--config', '/etc/herd/herd.yaml']);
  assert.deepEqual(services.herd?.command, ['herd', 'serve', '--config', '/etc/herd/herd.yaml']);
});

test('compose: the replicas wait for migrate to complete and for healthy databases; HAProxy for healthy replicas', () => {
  assert.deepEqual(services.herd?.depends_on, {
    migrate: { condition: 'service_completed_successfully' },
    postgres: { condition: 'service_healthy' },
    redis: { condition: 'service_healthy' },
  });
  assert.deepEqual(services.migrate?.depends_on, { postgres: { condition: 'service_healthy' } });
  assert.deepEqual(services.haproxy?.depends_on, { herd: { condition: 'service_healthy' } });
  for (const name of ['postgres', 'redis', 'herd', 'haproxy']) assert.ok(services[name]?.healthcheck?.test?.length, `${name} has a healthcheck`);
  assert.match(services.herd?.healthcheck?.test?.join(' ') ?? '', /\/v2\/health\/ready/);
});

test('compose: Herd containers run read-only as uid 1000 with no capabilities, secrets from .env and files', () => {
  for (const name of ['herd', 'migrate']) {
    const s = services[name] as Service;
    assert.equal(s.read_only, true, name);
    assert.equal(s.user, '1000:1000', name);
    assert.deepEqual(s.cap_drop, ['ALL'], name);
    assert.deepEqual(s.tmpfs, ['/tmp'], name);
    assert.ok(
      s.volumes?.every((v) => v.endsWith(':ro')),
      `${name}: every bind mount read-only (/data is the image's volume)`,
    );
    assert.equal(s.build?.target, 'runtime');
  }
  const text = readFileSync('deploy/compose.yaml', 'utf8');
  assert.doesNotMatch(text, /PASSWORD:|API_KEY=|MASTER_KEY:/, 'no secret value in compose.yaml');
  assert.ok(compose.secrets?.postgres_password?.file);
  assert.match(String(services.herd?.stop_grace_period), /^\d+s$/);
  assert.ok(Number.parseInt(String(services.herd?.stop_grace_period), 10) >= 30 + 5, 'stop_grace_period covers exit_timeout_secs (the drain grace inside it) and a margin');
});

test('compose: herd.yaml trusts exactly HAProxy’s address for X-Forwarded-For', () => {
  const haproxyNetworks = services.haproxy?.networks as Record<string, { ipv4_address?: string }>;
  const address = haproxyNetworks.herd?.ipv4_address;
  const herdYaml = parse(readFileSync('deploy/compose/herd.yaml', 'utf8')) as { server: { trusted_proxies?: string[] } };
  assert.deepEqual(herdYaml.server.trusted_proxies, [`${address}/32`]);
});

test('compose: command lines name only what the real CLI has', () => {
  const unknown = [...new Set(['herd', 'migrate'].flatMap((s) => unknownFlags(services[s]?.command ?? [])))];
  assert.deepEqual(unknown, []);
});

test('HAProxy: health checks on /v2/health/ready, redispatch on, retries only on connection failures', (t) => {
  const cfg = readFileSync('deploy/compose/haproxy.cfg', 'utf8');
  assert.match(cfg, /option httpchk GET \/v2\/health\/ready/);
  assert.match(cfg, /option redispatch/);
  assert.match(cfg, /retry-on conn-failure\s/, 'a request that reached a replica is never replayed');
  const slots = [...cfg.matchAll(/server-template herd (\d+) herd:800[01]/g)].map((m) => Number(m[1]));
  assert.deepEqual(slots, [services.herd?.deploy?.replicas, services.herd?.deploy?.replicas], 'one HAProxy slot per replica, HTTP and gRPC');
  const check = spawnSync('haproxy', ['-c', '-f', 'deploy/compose/haproxy.cfg'], { encoding: 'utf8' });
  if (check.error) return t.skip('haproxy is not installed (Debian: apt-get install -y haproxy)');
  assert.equal(check.status, 0, check.stderr);
});
