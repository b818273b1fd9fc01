// The recorded wire fixtures themselves (test/fixtures/<provider>/) and their replay: each file is named in
// its README with its source, heads.json names only files that exist, and a replay puts the recorded
// status, headers and exact bytes on the wire whatever the piece size.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { startMockUpstream } from '../helpers/mock-upstream.ts';
import { type FixtureProvider, offsetAfterEvents, readFixture, serveFixture } from '../helpers/replay-fixture.ts';

const PROVIDERS: FixtureProvider[] = ['openai', 'anthropic', 'gemini', 'triton'];
const dir = (provider: FixtureProvider) => resolve(import.meta.dirname, '../../fixtures', provider);

describe('recorded wire fixtures', () => {
  it('are each named in their README, parse as what they say, and heads.json names only files that exist', () => {
    for (const provider of PROVIDERS) {
      const readme = readFileSync(resolve(dir(provider), 'README.md'), 'utf8');
      const heads = JSON.parse(readFileSync(resolve(dir(provider), 'heads.json'), 'utf8')) as Record<string, unknown>;
      for (const file of Object.keys(heads)) assert.ok(existsSync(resolve(dir(provider), file)), `${provider}/heads.json: ${file}`);
      const bodies = readdirSync(dir(provider)).filter((f) => (f.endsWith('.json') || f.endsWith('.sse')) && f !== 'heads.json');
      assert.ok(bodies.length > 0);
      for (const file of bodies) {
        const stem = file.replace(/\.(json|sse)$/, '');
        assert.ok(readme.includes(file) || (file.startsWith('error-') && readme.includes('error-*.json')) || readme.includes(stem), `${provider}/README.md names ${file}`);
        const text = readFixture(provider, file).text;
        if (file.endsWith('.json')) JSON.parse(text);
        else {
          // Every event is whole (a cut stream ends between events, as a closed connection leaves it).
          assert.match(text, /(\r?\n){2}$/, `${provider}/${file} ends with a blank line`);
          for (const line of text.split(/\r?\n/)) if (line.startsWith('data: ') && line !== 'data: [DONE]') JSON.parse(line.slice(6));
        }
      }
    }
  });

  it('replay the recorded status, headers and bytes in any piece size, or reset after some events', async () => {
    const upstream = await startMockUpstream(serveFixture('anthropic', 'messages-text.sse'));
    try {
      const recorded = readFixture('anthropic', 'messages-text.sse');
      for (const pieceBytes of [0, 1, 5, 61]) {
        upstream.setHandler(serveFixture('anthropic', 'messages-text.sse', { pieceBytes }));
        const res = await fetch(upstream.url);
        assert.equal(res.headers.get('content-type'), 'text/event-stream');
        assert.deepEqual(Buffer.from(await res.arrayBuffer()), recorded.body, `pieces of ${pieceBytes}`);
      }
      upstream.setHandler(serveFixture('anthropic', 'error-429-rate-limit.json'));
      const limited = await fetch(upstream.url);
      assert.deepEqual([limited.status, limited.headers.get('retry-after')], [429, '12']);
      assert.equal(await limited.text(), readFixture('anthropic', 'error-429-rate-limit.json').text);

      const reset = offsetAfterEvents(recorded, 2);
      upstream.setHandler(serveFixture('anthropic', 'messages-text.sse', { resetAfterBytes: reset }));
      const cut = await fetch(upstream.url);
      const reader = cut.body!.getReader();
      const received: Uint8Array[] = [];
      await assert.rejects(async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return;
          received.push(value);
        }
      });
      assert.ok(Buffer.concat(received).length <= reset);
    } finally {
      await upstream.close();
    }
  });
});
