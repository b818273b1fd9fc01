// The generated OpenAPI document against the running server: every /admin/v1 route Fastify registered is
// in the document with its method, and every documented operation is a registered route; answers of real
// calls validate against the document's response schemas (JSON Schema 2020-12, as OpenAPI 3.1 says).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { asMaster, setupAdmin } from './admin-test-setup.ts';

type Doc = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, { content?: { 'application/json': { schema: object } } }>; parameters?: { name: string; in: string; required: boolean }[] }>> };

test('the OpenAPI document lists exactly the registered /admin/v1 routes, and real answers match its schemas', async () => {
  const s = await setupAdmin({ listen: true });
  try {
    const address = s.app.server.address();
    assert.ok(address && typeof address === 'object');
    const base = `http://127.0.0.1:${address.port}`;
    const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...asMaster(), ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, json: (await res.json()) as unknown };
    };

    const docRes = await fetch(`${base}/admin/v1/openapi.json`);
    assert.equal(docRes.status, 200, 'the document needs no key');
    const doc = (await docRes.json()) as Doc;
    assert.equal(doc.openapi, '3.1.0');
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    const registered = s.registered
      .filter((r) => r.includes(' /admin/v1/') && !r.startsWith('HEAD '))
      .map((r) => r.replace(/:([A-Za-z_]+)/g, '{$1}'))
      .sort();
    assert.deepEqual(documented, registered);
    assert.ok(registered.length >= 19, registered.join('\n'));
    const create = doc.paths['/admin/v1/keys']?.post;
    assert.deepEqual(
      create?.parameters?.filter((p) => p.in === 'header'),
      [{ name: 'Idempotency-Key', in: 'header', required: true, description: create?.parameters?.[0] && (create.parameters[0] as { description?: string }).description, schema: { type: 'string', minLength: 1, maxLength: 255 } }],
    );

    const ajv = new Ajv2020({ strict: false, allErrors: true });
    const check = (method: string, path: string, status: number, answer: unknown) => {
      const schema = doc.paths[path]?.[method.toLowerCase()]?.responses[String(status)]?.content?.['application/json'].schema;
      assert.ok(schema, `${method} ${path} ${status} is documented`);
      const validate = ajv.compile(schema);
      assert.ok(validate(answer), `${method} ${path}: ${JSON.stringify(validate.errors)}\n${JSON.stringify(answer)}`);
    };
    const team = await call('POST', '/admin/v1/teams', { name: 'ops', budgets: [{ period: 'week', amount_micros: 1_000_000 }] }, { 'idempotency-key': 'team-1' });
    check('POST', '/admin/v1/teams', team.status, team.json);
    const key = await call('POST', '/admin/v1/keys', { name: 'svc', team: 'ops', tags: ['a'], budgets: [{ period: 'day', amount_micros: 1 }] }, { 'idempotency-key': 'key-1' });
    check('POST', '/admin/v1/keys', key.status, key.json);
    const list = await call('GET', '/admin/v1/keys');
    check('GET', '/admin/v1/keys', list.status, list.json);
    check('GET', '/admin/v1/keys/{ref}', 200, (await call('GET', '/admin/v1/keys/svc')).json);
    const rotated = await call('POST', '/admin/v1/keys/svc/rotate', {}, { 'idempotency-key': 'rot-1' });
    check('POST', '/admin/v1/keys/{ref}/rotate', rotated.status, rotated.json);
    check('DELETE', '/admin/v1/keys/{ref}', 200, (await call('DELETE', '/admin/v1/keys/svc')).json);
    check('GET', '/admin/v1/teams', 200, (await call('GET', '/admin/v1/teams')).json);
    check('GET', '/admin/v1/audit', 200, (await call('GET', '/admin/v1/audit')).json);
    check('GET', '/admin/v1/audit/verify', 200, (await call('GET', '/admin/v1/audit/verify')).json);
    check('GET', '/admin/v1/usage', 200, (await call('GET', '/admin/v1/usage')).json);
    check('GET', '/admin/v1/models', 200, (await call('GET', '/admin/v1/models')).json);
    check('GET', '/admin/v1/routes', 200, (await call('GET', '/admin/v1/routes')).json);
    const refused = await call('GET', '/admin/v1/keys', undefined, { authorization: 'Bearer wrong' });
    assert.equal(refused.status, 401);
    const errorSchema = doc.paths['/admin/v1/keys']?.get?.responses.default?.content?.['application/json'].schema;
    assert.ok(errorSchema && ajv.compile(errorSchema)(refused.json));
  } finally {
    await s.close();
  }
});
