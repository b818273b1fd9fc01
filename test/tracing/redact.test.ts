// No secret in any span attribute: header and URL values go through the redaction helpers, and what the
// collector receives never holds the key, the token or the password.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tracingConfigSchema } from '../../src/config/tracing-config-schema.ts';
import { createTracing } from '../../src/tracing/create-tracing.ts';
import { REDACTED, redactHeaderValue, redactText, redactUrl } from '../../src/tracing/redact.ts';
import { SpanKind } from '../../src/tracing/tracer.ts';
import { startOtlpReceiver } from '../helpers/otlp-receiver.ts';

test('credential headers are redacted by name; others pass', () => {
  for (const name of ['Authorization', 'proxy-authorization', 'x-api-key', 'api-key', 'x-goog-api-key', 'Cookie', 'x-auth-token', 'X-Session-Id', 'openai-api-key']) {
    assert.equal(redactHeaderValue(name, 'Bearer sk-live-123'), REDACTED, name);
  }
  for (const name of ['content-type', 'x-request-id', 'anthropic-version', 'user-agent', 'keyboard', 'monkey']) {
    assert.equal(redactHeaderValue(name, 'v'), 'v', name);
  }
});

test('URLs lose their user info and credential-like query values; others are unchanged', () => {
  assert.equal(redactUrl('https://user:pa55@api.example.com/v1/chat?x=1'), `https://${REDACTED}@api.example.com/v1/chat?x=1`);
  assert.equal(
    redactUrl('https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?key=AIzaSECRET&alt=sse'),
    `https://generativelanguage.googleapis.com/v1beta/models/g:generateContent?key=${REDACTED}&alt=sse`,
  );
  assert.equal(redactUrl('https://blob.example.net/c?sv=2020&sig=abc%2Fdef&access_token=t'), `https://blob.example.net/c?sv=2020&sig=${REDACTED}&access_token=${REDACTED}`);
  assert.equal(redactUrl('http://127.0.0.1:8000/v2/models/m/infer'), 'http://127.0.0.1:8000/v2/models/m/infer');
  assert.equal(redactUrl('not a url with sk-secret'), REDACTED);
});

test('free text: URLs in it redacted, bearer and basic credentials replaced, other text untouched', () => {
  assert.equal(redactText('fetch https://x.googleapis.com/v1/m?key=AIzaSECRET failed: 403'), `fetch https://x.googleapis.com/v1/m?key=${REDACTED} failed: 403`);
  assert.equal(redactText('sent Authorization: Bearer sk-live-1234.abcd'), `sent Authorization: Bearer ${REDACTED}`);
  assert.equal(redactText('upstream did not answer in 30 s'), 'upstream did not answer in 30 s');
});

test('an exported span whose attributes came through the helpers carries none of the secrets', async (t) => {
  const receiver = await startOtlpReceiver();
  t.after(() => receiver.close());
  const secrets = ['sk-live-abcdef123456', 'AIzaSyVERYSECRET', 'hunter2', 'Bearer tok-987'];
  const tracing = createTracing(tracingConfigSchema.parse({ enabled: true, endpoint: receiver.url }), { env: {} });
  const span = tracing.tracer.startSpan('chat gemini', { kind: SpanKind.CLIENT, parent: undefined });
  span.setAttribute('url.full', redactUrl('https://admin:hunter2@example.com/v1beta/models/x?key=AIzaSyVERYSECRET'));
  span.setAttribute('http.request.header.authorization', [redactHeaderValue('authorization', 'Bearer tok-987')]);
  span.setAttribute('http.request.header.x-api-key', [redactHeaderValue('x-api-key', 'sk-live-abcdef123456')]);
  // An error whose message quotes the request: recordError keeps the message, not the credentials in it.
  span.recordError(new Error('POST https://example.com/v1beta/models/x?key=AIzaSyVERYSECRET with Bearer tok-987 failed'));
  span.end();
  await tracing.close();
  const bytes = Buffer.concat(receiver.requests.map((r) => r.bytes)).toString('latin1');
  for (const secret of secrets) assert.equal(bytes.includes(secret), false, `${secret} reached the collector`);
  assert.equal(receiver.spans[0]?.attributes['url.full'], `https://${REDACTED}@example.com/v1beta/models/x?key=${REDACTED}`);
});
