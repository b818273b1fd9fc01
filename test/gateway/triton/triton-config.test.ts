// herd.yaml for `type: triton` providers: no key or price needed, prompt_template only on their
// deployments, and each mistake reported at file:line:column.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHerdConfig } from '../../../src/config/load-herd-config.ts';
import { HerdError } from '../../../src/core/errors.ts';
import { buildGatewayCatalog } from '../../../src/gateway/router/gateway-catalog.ts';

function problems(yaml: string): string[] {
  try {
    parseHerdConfig(yaml, 'h.yaml', {});
  } catch (err) {
    assert.ok(err instanceof HerdError && err.code === 'INVALID_ARG', String(err));
    return err.message.split('\n');
  }
  assert.fail('config was accepted');
}

test('a triton provider needs no key, base_url or price: enabled, local, priced at zero', () => {
  const config = parseHerdConfig(
    `providers:
  local: { type: triton }
  remote: { type: triton, base_url: "http://10.0.0.2:8000" }
  keyed: { type: triton, base_url: "http://10.0.0.3:8000", api_key_env: TRITON_KEY }
models:
  echo:
    deployments:
      - { provider: local, upstream_model: "echo_llm:2", prompt_template: chatml }
      - { provider: remote, upstream_model: echo_llm, prompt_template: { system: "S {content}", user: "U {content}", assistant: "A {content}" } }
      - { provider: keyed }
`,
    'h.yaml',
    {},
  );
  const catalog = buildGatewayCatalog(config, {});
  assert.deepEqual(
    [...catalog.providers.values()].map((p) => [p.name, p.enabled, p.baseUrl, p.disabledReason]),
    [
      ['local', true, undefined, undefined],
      ['remote', true, 'http://10.0.0.2:8000', undefined],
      ['keyed', false, 'http://10.0.0.3:8000', 'TRITON_KEY is not set'],
    ],
  );
  const echo = catalog.models.get('echo');
  assert.deepEqual(echo?.deployments[0]?.price, { input: 0, output: 0 });
  assert.equal(echo?.deployments[0]?.promptTemplate, 'chatml');
  assert.deepEqual(echo?.deployments[1]?.promptTemplate, { system: 'S {content}', user: 'U {content}', assistant: 'A {content}', generation: '' });
});

test('a prompt_template must name a preset or give every role with {content}', () => {
  const lines = problems(`providers:
  local: { type: triton }
models:
  m:
    deployments:
      - { provider: local, prompt_template: { system: "S", user: "{content}", assistant: "{content}" } }
      - { provider: local, prompt_template: nonsense }
`);
  assert.deepEqual(lines, ['h.yaml:6:55: models.m.deployments[0].prompt_template.system: must contain {content}', ...lines.slice(1)]);
  assert.match(lines[1] ?? '', /^h\.yaml:7:45: models\.m\.deployments\[1\]\.prompt_template: .*plain.*raw.*chatml.*llama3/);
});

test('prompt_template only on triton deployments; headers need a remote server', () => {
  const lines = problems(`providers:
  relay: { type: openai, base_url: "http://relay/v1" }
  local: { type: triton, headers: { x-a: b } }
models:
  m:
    price: { input: 1, output: 1 }
    deployments:
      - { provider: relay, prompt_template: raw }
`);
  assert.deepEqual(lines, [
    'h.yaml:3:35: providers.local.headers: a triton provider without base_url calls this Herd in process: there are no HTTP headers to send',
    'h.yaml:8:45: models.m.deployments[0].prompt_template: only valid for deployments of a type: triton provider',
  ]);
});
