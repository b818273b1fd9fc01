// Which OpenAI endpoints besides chat a provider offers: herd.yaml's `endpoints`, else its preset's
// (for the preset's own URL only), else none.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { resolveProviderEndpoint } from '../../src/gateway/router/resolve-provider-endpoint.ts';
import { gatewayConfig } from './helpers/gateway-fixtures.ts';

describe('resolveProviderEndpoint endpoints', () => {
  it('presets: openai offers responses and completions, deepseek and holysheep neither', () => {
    assert.deepEqual(resolveProviderEndpoint('openai', { type: 'openai' }).endpoints, ['responses', 'completions']);
    assert.deepEqual(resolveProviderEndpoint('deepseek', { type: 'openai' }).endpoints, []);
    assert.deepEqual(resolveProviderEndpoint('holysheep', { type: 'openai' }).endpoints, []);
  });

  it('a relay offers only what herd.yaml says, and a preset name at another URL does not inherit the preset', () => {
    assert.deepEqual(resolveProviderEndpoint('relay', { type: 'openai', base_url: 'https://relay.example/v1' }).endpoints, []);
    assert.deepEqual(resolveProviderEndpoint('relay', { type: 'openai', base_url: 'https://relay.example/v1', endpoints: ['responses'] }).endpoints, ['responses']);
    assert.deepEqual(resolveProviderEndpoint('openai', { type: 'openai', base_url: 'http://127.0.0.1:9/v1' }).endpoints, []);
    assert.deepEqual(resolveProviderEndpoint('openai', { type: 'openai', endpoints: [] }).endpoints, []);
  });

  it('endpoints is only valid for type: openai', () => {
    assert.throws(
      () => gatewayConfig('providers: { anthropic: { type: anthropic, endpoints: [responses] } }\nmodels: { m: { deployments: [{ provider: anthropic }] } }'),
      /only valid for type: openai/,
    );
  });
});
