// Upstreams' own model lists, in each dialect's shape, down to the ids a deployment would name.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseUpstreamModelList } from '../../../src/gateway/providers/parse-upstream-model-list.ts';

test('OpenAI and Anthropic lists: data[].id; Gemini: models[].name without its models/ prefix', () => {
  assert.deepEqual(parseUpstreamModelList({ object: 'list', data: [{ id: 'gpt-5', object: 'model' }, { id: 'gpt-5-mini' }] }), ['gpt-5', 'gpt-5-mini']);
  assert.deepEqual(parseUpstreamModelList({ data: [{ type: 'model', id: 'claude-opus-4-8', display_name: 'Claude Opus 4.8' }], has_more: false }), ['claude-opus-4-8']);
  assert.deepEqual(parseUpstreamModelList({ models: [{ name: 'models/gemini-2.5-pro' }, { name: 'tunedModels/x' }], nextPageToken: 'p' }), ['gemini-2.5-pro', 'tunedModels/x']);
});

test('malformed members are skipped; a body that is no list is undefined', () => {
  assert.deepEqual(parseUpstreamModelList({ data: [{ id: '' }, { id: 3 }, null, 'gpt', { id: 'ok' }] }), ['ok']);
  assert.deepEqual(parseUpstreamModelList({ models: [{ name: 7 }, { name: 'models/' }] }), []);
  assert.equal(parseUpstreamModelList({ error: { message: 'nope' } }), undefined);
  assert.equal(parseUpstreamModelList([]), undefined);
  assert.equal(parseUpstreamModelList('list'), undefined);
});
