// The import checker on hand-written sources: each wrong-way import of each kind is caught (the holes
// the first regex-based check had), a wrong way inside a folder with a layer table, an import circle;
// and the allowed ones are not.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CLOSED_LAYERS, checkImportCycles, checkImports, COMPUTED_IMPORTS, FOLDER_LAYERS, formatViolation, type ImportRules, LAYERS, PACKAGE_OWNERS } from './check-imports.ts';

const rules: ImportRules = {
  layers: LAYERS,
  packageOwners: PACKAGE_OWNERS,
  closedLayers: CLOSED_LAYERS,
  dependencies: ['fastify', '@fastify/cors', '@grpc/grpc-js', '@grpc/proto-loader', 'zod', 'undici', 'commander', 'pg'],
  computedImports: COMPUTED_IMPORTS,
  // The folder tables have their own tests below; these fixtures check the layers between folders.
  folderLayers: {},
  allowedCycles: [],
};

/** Checks one file and returns its violations as `line message`. */
function check(path: string, text: string): string[] {
  return checkImports([{ path, text }], rules).map((v) => formatViolation(v).slice(path.length + 1));
}

function assertCaught(path: string, text: string, line: number, message: RegExp): void {
  const found = check(path, text);
  assert.equal(found.length, 1, `${path}: ${JSON.stringify(found)}`);
  assert.match(found[0] as string, new RegExp(`^${line} `), found[0]);
  assert.match(found[0] as string, message);
}

test('dynamic imports written as templates are checked by the folder their static prefix names', () => {
  assertCaught('src/gateway/load-route.ts', 'export const load = (x: string) => import(`../http/${x}.ts`);\n', 1, /dynamic import `\.\.\/http\/\$\{x\}\.ts` goes gateway → http/);
  assertCaught('src/serving/a.ts', '\nconst m = await import(`../gateway/route-${name}.ts`);\n', 2, /serving → gateway/);
  assertCaught('src/gateway/b.ts', "const m = await import('../cli/' + name);\n", 1, /gateway → cli/);
  assertCaught('src/gateway/deep/c.ts', 'await import(`../../${layer}/x.ts`);\n', 1, /computed above the layer folders/);
  assertCaught('src/gateway/d.ts', 'await import(`${base}/x.ts`);\n', 1, /the target is computed/);
  assertCaught('src/gateway/e.ts', 'const url = where();\nawait import(url);\n', 2, /COMPUTED_IMPORTS/);
  // Inside its own folder a template is fine: `./` beside the importer, `../` of a nested file.
  assert.deepEqual(check('src/gateway/f.ts', 'await import(`./providers/${x}.ts`);\n'), []);
  assert.deepEqual(check('src/gateway/billing/g.ts', 'await import(`../cache/${x}.ts`);\n'), []);
});

test('.mjs and .js files under src/ are checked like .ts files', () => {
  assertCaught('src/serving/backends/onnxruntime/worker-bootstrap.mjs', "import { x } from '../../../http/send-body.ts';\n", 1, /serving → http/);
  assertCaught('src/gateway/legacy.js', "const x = require('../grpc/server.js');\n", 1, /require '\.\.\/grpc\/server\.js' goes gateway → grpc/);
  assertCaught('src/serving/w.mjs', "const { register } = await import('fastify');\n", 1, /'fastify' belongs to http, app\.ts only, not serving/);
  // A worker entry named by URL is code loaded from here.
  assertCaught('src/serving/start.ts', "new Worker(new URL('../http/worker.mjs', import.meta.url));\n", 1, /url '\.\.\/http\/worker\.mjs' goes serving → http/);
  // A data file read through a URL is no import.
  assert.deepEqual(check('src/serving/meta.ts', "readFileSync(new URL('../../package.json', import.meta.url));\n"), []);
});

test('packages: fastify only in http/ and app.ts, @grpc/* only in grpc/, client/ and app.ts, and only dependencies', () => {
  assertCaught('src/gateway/a.ts', "import Fastify from 'fastify';\n", 1, /'fastify' belongs to http, app\.ts only, not gateway/);
  assertCaught('src/serving/b.ts', "import type { FastifyRequest } from 'fastify';\n", 1, /import type 'fastify'.*not serving/);
  assertCaught('src/serving/c.ts', "type Reply = import('fastify').FastifyReply;\n", 1, /not serving/);
  assertCaught('src/gateway/d.ts', "import cors from '@fastify/cors';\n", 1, /'@fastify\/cors' belongs to http, app\.ts only/);
  assertCaught('src/gateway/e.ts', "import * as grpc from '@grpc/grpc-js';\n", 1, /'@grpc\/grpc-js' belongs to grpc, client, app\.ts only, not gateway/);
  assertCaught('src/http/f.ts', "export { Server } from '@grpc/grpc-js';\n", 1, /export '@grpc\/grpc-js'.*not http/);
  assertCaught('src/gateway/g.ts', "import { Command } from 'commander';\n", 1, /'commander' belongs to cli only/);
  assertCaught('src/gateway/h.ts', 'const p = await import(`fastify/${x}`);\n', 1, /'fastify' belongs to http/);
  assertCaught('src/serving/i.ts', "import pg from 'pg';\n", 1, /'pg' belongs to gateway only, not serving/);
  assertCaught('src/gateway/j.ts', "import OpenAI from 'openai';\n", 1, /'openai' is not in package.json dependencies/);
  assertCaught('src/core/k.ts', "import { z } from 'zod';\n", 1, /core\/ imports no package/);
  assertCaught('src/client/l.ts', "import { z } from 'zod';\n", 1, /client\/ imports no package but undici, @grpc\/\*, protobufjs/);
  assertCaught('src/gateway/m.ts', 'await import(`@grpc/${x}`);\n', 1, /the package is computed/);
  // Where they belong, and Node's built-ins everywhere, with or without `node:`.
  assert.deepEqual(check('src/http/create-app.ts', "import Fastify from 'fastify';\nimport cors from '@fastify/cors';\n"), []);
  assert.deepEqual(check('src/app.ts', "import type { FastifyInstance } from 'fastify';\nimport type { Server } from '@grpc/grpc-js';\n"), []);
  assert.deepEqual(check('src/grpc/create-grpc-server.ts', "import * as grpc from '@grpc/grpc-js';\nimport { loadSync } from '@grpc/proto-loader';\n"), []);
  assert.deepEqual(check('src/client/kserve-grpc-client.ts', "import * as grpc from '@grpc/grpc-js';\nimport { loadSync } from '@grpc/proto-loader';\n"), []);
  assert.deepEqual(check('src/core/n.ts', "import { readFileSync } from 'node:fs';\nimport { join } from 'path';\nimport { setTimeout } from 'timers/promises';\n"), []);
});

test('the layer direction, for every form of import', () => {
  assertCaught('src/serving/a.ts', "import { ChatGateway } from '../gateway/chat-gateway.ts';\n", 1, /serving → gateway/);
  assertCaught('src/gateway/b.ts', "import type { Backend } from '../serving/backends/backend.ts';\n", 1, /gateway → serving/);
  assertCaught('src/gateway/c.ts', "export * from '../http/send-body.ts';\n", 1, /export .* gateway → http/);
  assertCaught('src/gateway/d.ts', "const where = import.meta.resolve('../grpc/x.ts');\n", 1, /gateway → grpc/);
  assertCaught('src/core/e.ts', "type C = import('../config/herd-config-schema.ts').HerdConfig;\n", 1, /core → config/);
  assertCaught('src/client/f.ts', "import { x } from '../gateway/x.ts';\n", 1, /client → gateway/);
  assertCaught('src/http/g.ts', "import { main } from '../cli/herd.ts';\n", 1, /http → cli/);
  assertCaught('src/gateway/h.ts', "import { fake } from '../../test/gateway/helpers/mock-upstream.ts';\n", 1, /leaves src\//);
  assertCaught('src/plugins/i.ts', '', 1, /unknown top-level folder src\/plugins/);
  assert.deepEqual(check('src/http/j.ts', "import { a } from '../gateway/a.ts';\nimport { b } from '../serving/b.ts';\n"), []);
  assert.deepEqual(check('src/cli/k.ts', "import { startHerd } from '../app.ts';\nimport { Command } from 'commander';\n"), []);
});

test('an import written inside a string or a comment is no import', () => {
  const text = [
    "// import { x } from '../http/x.ts';",
    'const hint = "write import(\'../http/x.ts\') to load it";',
    "const code = `import { y } from '../cli/y.ts'`;",
    '/* await import(`../grpc/${x}`) */',
    '',
  ].join('\n');
  assert.deepEqual(check('src/gateway/help.ts', text), []);
});

test('the deliberate computed imports are exempt only as written, in their own file', () => {
  assert.deepEqual(check('src/serving/backends/js/load-js-model.ts', 'await import(url);\n'), []);
  assertCaught('src/serving/backends/js/load-js-model.ts', 'await import(other);\n', 1, /the target is computed/);
  assertCaught('src/serving/backends/js/other.ts', 'await import(url);\n', 1, /the target is computed/);
});

test('an import circle is caught, type-only imports included, and reported as one circle per tangle', () => {
  const found = (files: { path: string; text: string }[], allowedCycles: ImportRules['allowedCycles'] = []) => checkImportCycles(files, { allowedCycles }).map(formatViolation);
  const pair = [
    { path: 'src/grpc/service.ts', text: "import { handle } from './handler.ts';\nexport interface Deps { x: number }\n" },
    { path: 'src/grpc/handler.ts', text: "import type { Deps } from './service.ts';\nexport const handle = (d: Deps) => d;\n" },
  ];
  assert.deepEqual(found(pair), [
    'src/grpc/handler.ts:1 import circle src/grpc/handler.ts → src/grpc/service.ts → src/grpc/handler.ts: move what both need into a module of its own',
  ]);
  const three = [
    { path: 'src/serving/a.ts', text: "import type { B } from './sub/b.ts';\n" },
    { path: 'src/serving/sub/b.ts', text: "export { c } from '../c.ts';\n" },
    { path: 'src/serving/c.ts', text: "type A = import('./a.ts').A;\n" },
    { path: 'src/serving/d.ts', text: "import { a } from './a.ts';\n" },
  ];
  assert.deepEqual(found(three), [
    'src/serving/a.ts:1 import circle src/serving/a.ts → src/serving/sub/b.ts → src/serving/c.ts → src/serving/a.ts: move what both need into a module of its own',
  ]);
  // The type moved to a module of its own: no circle.
  const fixed = [
    { path: 'src/grpc/deps.ts', text: 'export interface Deps { x: number }\n' },
    { path: 'src/grpc/service.ts', text: "import { handle } from './handler.ts';\nimport type { Deps } from './deps.ts';\n" },
    { path: 'src/grpc/handler.ts', text: "import type { Deps } from './deps.ts';\n" },
  ];
  assert.deepEqual(found(fixed), []);
  // An allowed circle passes only while it exists exactly as listed.
  const allowed = [{ files: ['src/grpc/service.ts', 'src/grpc/handler.ts'], reason: 'fixture' }];
  assert.deepEqual(found(pair, allowed), []);
  assert.deepEqual(found(fixed, allowed), ['src/grpc/service.ts:1 allowed circle src/grpc/service.ts ↔ src/grpc/handler.ts no longer exists as listed: update ALLOWED_CYCLES']);
});

test('inside a folder with a layer table, a part imports only the parts its row names', () => {
  const table = { 'ground/': [], 'middle/': ['ground/'], 'top.ts': ['middle/', 'ground/'], 'data.ts': [] };
  const inFolder = (path: string, text: string) =>
    checkImports([{ path, text }], { ...rules, folderLayers: { serving: table } }).map((v) => formatViolation(v).slice(path.length + 1));
  assert.deepEqual(inFolder('src/serving/ground/x.ts', "import { y } from '../middle/y.ts';\n"), [
    "1 import '../middle/y.ts' goes serving/ground/ → serving/middle/, against serving's layer table",
  ]);
  assert.deepEqual(inFolder('src/serving/middle/deep/x.ts', "import type { T } from '../../top.ts';\n"), [
    "1 import type '../../top.ts' goes serving/middle/ → serving/top.ts, against serving's layer table",
  ]);
  assert.deepEqual(inFolder('src/serving/data.ts', 'await import(`./ground/${x}.ts`);\n'), [
    "1 dynamic import `./ground/${x}.ts` goes serving/data.ts → serving/ground/, against serving's layer table",
  ]);
  assert.deepEqual(inFolder('src/serving/top.ts', 'await import(`./${x}.ts`);\n'), [
    "1 dynamic import `./${x}.ts`: the target is computed at serving/'s root, so its part cannot be checked",
  ]);
  assert.deepEqual(inFolder('src/serving/other.ts', ''), ["1 other.ts is not in serving's layer table: add it to FOLDER_LAYERS and to docs/architecture.md"]);
  // Down the table, inside one part, and out of the folder (the layer direction's business) are fine.
  assert.deepEqual(inFolder('src/serving/top.ts', "import { a } from './middle/a.ts';\nimport { b } from './ground/b.ts';\nimport { c } from '../core/c.ts';\n"), []);
  assert.deepEqual(inFolder('src/serving/middle/a.ts', "import { d } from './deep/d.ts';\nimport { g } from '../ground/g.ts';\n"), []);
  // Another folder has no table, so no rule inside it.
  assert.deepEqual(check('src/metrics/router/x.ts', "import { y } from '../billing/y.ts';\n"), []);
});

test("serving/'s table: model-config/ is the ground and repository/ the roof", () => {
  const serving = (path: string, text: string) => checkImports([{ path, text }], { ...rules, folderLayers: FOLDER_LAYERS }).map((v) => formatViolation(v).slice(path.length + 1));
  assert.deepEqual(serving('src/serving/model-config/parse-model-config.ts', "import type { BackendFactory } from '../backends/backend.ts';\n"), [
    "1 import type '../backends/backend.ts' goes serving/model-config/ → serving/backends/, against serving's layer table",
  ]);
  assert.deepEqual(serving('src/serving/scheduler/model-scheduler.ts', "import type { LoadedModel } from '../repository/loaded-model.ts';\n"), [
    "1 import type '../repository/loaded-model.ts' goes serving/scheduler/ → serving/repository/, against serving's layer table",
  ]);
  assert.deepEqual(serving('src/serving/ensemble/ensemble-scheduler.ts', "import type { InferenceService } from '../inference-service.ts';\n"), [
    "1 import type '../inference-service.ts' goes serving/ensemble/ → serving/inference-service.ts, against serving's layer table",
  ]);
  assert.deepEqual(
    serving(
      'src/serving/repository/model-repository-manager.ts',
      "import type { ModelConfig } from '../model-config/model-config.ts';\nimport { EnsembleScheduler } from '../ensemble/ensemble-scheduler.ts';\n",
    ),
    [],
  );
});

test("gateway/'s table: protocol/ at the bottom, wire/ under providers/, ingress/ on wire/ only, flow/ on top", () => {
  const gateway = (path: string, text: string) => checkImports([{ path, text }], { ...rules, folderLayers: FOLDER_LAYERS }).map((v) => formatViolation(v).slice(path.length + 1));
  assert.deepEqual(gateway('src/gateway/protocol/chat-types.ts', "import type { Provider } from '../providers/provider.ts';\n"), [
    "1 import type '../providers/provider.ts' goes gateway/protocol/ → gateway/providers/, against gateway's layer table",
  ]);
  assert.deepEqual(gateway('src/gateway/wire/anthropic-messages/anthropic-stream-translator.ts', "import type { HttpUpstream } from '../../providers/http-upstream.ts';\n"), [
    "1 import type '../../providers/http-upstream.ts' goes gateway/wire/ → gateway/providers/, against gateway's layer table",
  ]);
  assert.deepEqual(gateway('src/gateway/ingress/openai-chat/validate-chat-request.ts', "import type { ChatMeta } from '../../router/chat-meta.ts';\n"), [
    "1 import type '../../router/chat-meta.ts' goes gateway/ingress/ → gateway/router/, against gateway's layer table",
  ]);
  assert.deepEqual(gateway('src/gateway/billing/billing-service.ts', "import type { ChatStream } from '../flow/chat-service.ts';\n"), [
    "1 import type '../flow/chat-service.ts' goes gateway/billing/ → gateway/flow/, against gateway's layer table",
  ]);
  assert.deepEqual(gateway('src/gateway/resilience/deadline.ts', "import { runAttempts } from '../router/run-attempts.ts';\n"), [
    "1 import '../router/run-attempts.ts' goes gateway/resilience/ → gateway/router/, against gateway's layer table",
  ]);
  assert.deepEqual(gateway('src/gateway/chat-gateway.ts', ''), ["1 chat-gateway.ts is not in gateway's layer table: add it to FOLDER_LAYERS and to docs/architecture.md"]);
  assert.deepEqual(
    gateway(
      'src/gateway/flow/chat-gateway.ts',
      "import type { BillingService } from '../billing/billing-service.ts';\nimport type { RawSse } from '../protocol/raw-sse.ts';\nimport { splitSseEvents } from '../wire/split-sse-events.ts';\n",
    ),
    [],
  );
});
