// Triton's generate extension over HTTP against the real server: keys to tensors or parameters,
// scalar outputs, SSE framing of generate_stream, and Triton's errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { EXAMPLE_REPOSITORY, postJson, request, startTestServer } from '../e2e/start-test-server.ts';
import { diamondModels, writeRepository } from '../serving/ensemble/ensemble-fixtures.ts';

test('generate: token_counter from a top-level key or from parameters; arrays stay arrays', async () => {
  const server = await startTestServer({ repositories: [EXAMPLE_REPOSITORY], controlMode: 'explicit', loadModel: ['token_counter'] });
  const url = `${server.httpUrl}/v2/models/token_counter`;
  try {
    const top = await postJson(`${url}/generate`, { id: '42', text_input: 'hello world', temperature: 0 });
    assert.equal(top.status, 200, top.body.toString());
    assert.equal(top.headers.get('content-type'), 'application/json');
    assert.equal(top.body.toString(), '{"id":"42","model_name":"token_counter","model_version":"1","token_count":2}');

    const nested = await postJson(`${url}/versions/1/generate`, { parameters: { text_input: 'hello world', stream: false } });
    assert.deepEqual(nested.json(), { model_name: 'token_counter', model_version: '1', token_count: 2 });

    // A client that accepts an encoding is answered by the Fastify route instead of the fast path: the same answer.
    const framework = await postJson(`${url}/generate`, { id: '42', text_input: 'hello world', temperature: 0 }, { 'accept-encoding': 'identity' });
    assert.equal(framework.body.toString(), top.body.toString());

    const many = await postJson(`${url}/generate`, { text_input: ['hello world', 'a b c'] });
    assert.deepEqual(many.json(), { model_name: 'token_counter', model_version: '1', token_count: [2, 3] });
  } finally {
    await server.close();
  }
});

test('generate: Triton errors before inference are plain JSON errors', async () => {
  const server = await startTestServer({ repositories: [EXAMPLE_REPOSITORY], controlMode: 'explicit', loadModel: ['token_counter'] });
  const url = server.httpUrl;
  try {
    const unknown = await postJson(`${url}/v2/models/nope/generate`, { text_input: 'x' });
    assert.equal(unknown.status, 400);
    assert.match((unknown.json() as { error: string }).error, /Request for unknown model: 'nope'/);

    const badParam = await postJson(`${url}/v2/models/token_counter/generate`, { text_input: 'x', extra: { a: 1 } });
    assert.equal(badParam.status, 400);
    assert.deepEqual(badParam.json(), { error: "parameter 'extra' has invalid type. It should be either 'int', 'bool', or 'string'." });

    const missing = await postJson(`${url}/v2/models/token_counter/generate`, {});
    assert.equal(missing.status, 400);
    assert.match((missing.json() as { error: string }).error, /text_input/);

    const stream = await postJson(`${url}/v2/models/token_counter/generate_stream`, { parameters: [] });
    assert.equal(stream.status, 400);
    assert.match(stream.headers.get('content-type') ?? '', /^application\/json/);
    assert.deepEqual(stream.json(), { error: "Expected JSON object for keyword: 'parameters'" });

    const notJson = await request(`${url}/v2/models/token_counter/generate`, { method: 'POST', body: '{"text_input":' });
    assert.equal(notJson.status, 400);
    assert.match((notJson.json() as { error: string }).error, /^failed to parse the request JSON buffer/);
  } finally {
    await server.close();
  }
});

test('generate_stream: data events with no event line and no [DONE]; an ensemble answers; a failing first response sets the status', async () => {
  const server = await startTestServer({ repositories: [writeRepository(diamondModels())] });
  const url = `${server.httpUrl}/v2/models/diamond`;
  try {
    const ok = await postJson(`${url}/generate_stream`, { id: 'a', X: [1, 2] });
    assert.equal(ok.status, 200);
    assert.equal(ok.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.equal(ok.body.toString(), 'data: {"Y":[4,7],"id":"a","model_name":"diamond","model_version":"1"}\n\n');

    const single = await postJson(`${url}/generate`, { X: 3 });
    assert.deepEqual(single.json(), { Y: 10, model_name: 'diamond', model_version: '1' });

    const failed = await postJson(`${url}/generate_stream`, { X: [-999] });
    assert.equal(failed.status, 400);
    assert.equal(failed.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    assert.match(failed.body.toString(), /^data: \{"error":"in ensemble 'diamond', step '(double|add_one)': the model refuses -999"\}\n\n$/);
  } finally {
    await server.close();
  }
});

test('generate_stream on a decoupled model: one event per response, a later error inside the 200 stream; generate refuses many responses', async () => {
  const server = await startTestServer({ repositories: [resolve('test/fixtures/decoupled_repository')] });
  const url = `${server.httpUrl}/v2/models/repeat_int32`;
  try {
    const res = await postJson(`${url}/generate_stream`, { IN: [5, -1, 7] });
    assert.equal(res.status, 200);
    const events = res.body.toString().split('\n\n').filter(Boolean);
    assert.equal(events.length, 3, res.body.toString());
    assert.ok(
      events.every((e) => e.startsWith('data: ')),
      'no event: lines',
    );
    assert.deepEqual(JSON.parse(events[0]!.slice(6)), { IDX: 0, OUT: 5, model_name: 'repeat_int32', model_version: '1' });
    assert.ok('error' in JSON.parse(events[1]!.slice(6)));
    assert.deepEqual(JSON.parse(events[2]!.slice(6)), { IDX: 2, OUT: 7, model_name: 'repeat_int32', model_version: '1' });

    const single = await postJson(`${url}/generate`, { IN: [1, 2] });
    assert.equal(single.status, 200);
    assert.deepEqual(single.json(), { error: 'generate expects model to produce exactly 1 response, use generate stream for model that generates various number of responses' });
    const one = await postJson(`${url}/generate`, { IN: [4] });
    assert.deepEqual(one.json(), { IDX: 0, OUT: 4, model_name: 'repeat_int32', model_version: '1' });
  } finally {
    await server.close();
  }
});
