// tritonserver's flags as KServe's Triton ServingRuntime passes them (`tritonserver --model-store=/mnt/models
// --grpc-port=9000 --http-port=8080 --allow-grpc=true --allow-http=true`), both `--flag=value` and `--flag value`
// forms, Triton's boolean spellings; tritonserver flags that mean nothing here warn; unknown ones fail.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { createHerdProgram } from '../../src/cli/create-herd-program.ts';
import { resolveServeConfig, type ServeFlags } from '../../src/cli/serve-command.ts';
import { listIgnoredTritonFlags } from '../../src/cli/triton-compat-flags.ts';

const REPOSITORY = resolve('test/fixtures/slow_repository');

/** The serve command's parsed flags, without starting anything. */
async function parse(args: string[]): Promise<ServeFlags & Record<string, unknown>> {
  const program = createHerdProgram();
  let captured: (ServeFlags & Record<string, unknown>) | undefined;
  const serve = program.commands.find((c: Command) => c.name() === 'serve') as Command;
  serve.action((flags: ServeFlags & Record<string, unknown>) => {
    captured = flags;
  });
  program.exitOverride();
  serve.exitOverride();
  serve.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  await program.parseAsync(['node', 'herd', ...args]);
  return captured as ServeFlags & Record<string, unknown>;
}

test("KServe's Triton runtime args, as written in its ClusterServingRuntime", async () => {
  const flags = await parse(['tritonserver', `--model-store=${REPOSITORY}`, '--grpc-port=9000', '--http-port=8080', '--allow-grpc=true', '--allow-http=true']);
  const config = resolveServeConfig(flags);
  assert.deepEqual(config.serving.model_repository, [REPOSITORY]);
  assert.equal(config.server.grpc_port, 9000);
  assert.equal(config.server.http_port, 8080);
  assert.equal(config.server.allow_grpc, true);
  assert.equal(config.server.allow_http, true);
});

test('the other common flags, in both forms, with Triton boolean spellings', async () => {
  const flags = await parse([
    'serve',
    '--model-repository',
    REPOSITORY,
    '--model-control-mode',
    'explicit',
    '--load-model=slow_echo',
    '--load-model',
    'other',
    '--strict-readiness',
    'off',
    '--exit-timeout-secs=45',
    '--log-verbose',
    '1',
    '--allow-grpc',
    '0',
    '--drain-grace-secs=2.5',
  ]);
  const config = resolveServeConfig(flags);
  assert.equal(config.serving.model_control_mode, 'explicit');
  assert.deepEqual(config.serving.load_model, ['slow_echo', 'other']);
  assert.equal(config.serving.strict_readiness, false);
  assert.equal(config.server.exit_timeout_secs, 45);
  assert.equal(config.server.log_verbose, 1);
  assert.equal(config.server.allow_grpc, false);
  assert.equal(config.server.drain_grace_secs, 2.5);
  // --model-store adds to --model-repository, as two repositories.
  const both = resolveServeConfig(await parse(['serve', '--model-repository', REPOSITORY, '--model-store', '/tmp']));
  assert.deepEqual(both.serving.model_repository, [REPOSITORY, '/tmp']);
  // A bare boolean flag is true.
  assert.equal(resolveServeConfig(await parse(['serve', '--model-store', REPOSITORY, '--strict-readiness'])).serving.strict_readiness, true);
});

test('bad values and --allow-http=false with gateway models are clear errors', async () => {
  assert.throws(() => resolveServeConfig({ modelStore: [REPOSITORY], allowHttp: 'maybe' }), /--allow-http must be true or false, got 'maybe'/);
  assert.throws(() => resolveServeConfig({ modelStore: [REPOSITORY], drainGraceSecs: '-1' }), /--drain-grace-secs must be a number of seconds/);
  assert.throws(() => resolveServeConfig({ modelStore: [REPOSITORY], logVerbose: 'loud' }), /--log-verbose must be an integer/);
  assert.equal(resolveServeConfig({ modelStore: [REPOSITORY], allowHttp: 'false' }).server.allow_http, false);
  const dir = mkdtempSync(join(tmpdir(), 'herd-flags-'));
  const file = join(dir, 'herd.yaml');
  writeFileSync(
    file,
    'providers: { up: { type: openai, base_url: "http://127.0.0.1:9/v1" } }\nmodels: { m: { price: { input: 1, output: 1 }, deployments: [{ provider: up }] } }\n',
  );
  assert.throws(() => resolveServeConfig({ config: file, allowHttp: 'false' }), /--allow-http=false leaves the LLM gateway \(served on the HTTP port\) unreachable/);
});

test("tritonserver flags that mean nothing here are accepted with a warning; an unknown flag is commander's error", async () => {
  const flags = await parse(['tritonserver', `--model-store=${REPOSITORY}`, '--strict-model-config=false', '--allow-sagemaker', 'false', '--log-info=true']);
  assert.deepEqual(
    listIgnoredTritonFlags(flags).map((line) => line.split(' ')[0]),
    ['--strict-model-config', '--allow-sagemaker', '--log-info'],
  );
  await assert.rejects(parse(['tritonserver', '--no-such-flag=1']), /unknown option '--no-such-flag=1'/);
});

test('herd tritonserver with those args starts, answers ready, warns for an ignored flag; --allow-http=false opens no HTTP port', async () => {
  const herd = resolve('bin/herd.mjs');
  const start = (extra: string[]) => {
    const child = spawn(
      process.execPath,
      [herd, 'tritonserver', `--model-store=${REPOSITORY}`, '--grpc-port=0', '--http-port=0', '--metrics-port=0', '--host=127.0.0.1', ...extra],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    const waitFor = async (pattern: RegExp) => {
      for (;;) {
        const m = pattern.exec(out);
        if (m) return m;
        if (child.exitCode !== null) throw new Error(`exited without ${pattern}: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    return { child, exited, waitFor, output: () => out };
  };
  const a = start(['--allow-grpc=true', '--allow-http=true', '--strict-model-config=false', '--drain-grace-secs=0']);
  try {
    const [, url] = (await a.waitFor(/Started HTTPService at \S+ \((http:\/\/[^)]+)\)/)) as RegExpExecArray;
    await a.waitFor(/^Ready: /m);
    assert.equal((await fetch(`${url}/v2/health/ready`)).status, 200);
    assert.match(a.output(), /warning: --strict-model-config is tritonserver's and ignored by Herd/);
  } finally {
    a.child.kill('SIGTERM');
  }
  assert.equal(await a.exited, 0);

  const b = start(['--allow-http=false', '--drain-grace-secs=0']);
  try {
    await b.waitFor(/HTTPService not started \(--allow-http=false\)/);
    await b.waitFor(/Started GRPCInferenceService/);
  } finally {
    b.child.kill('SIGTERM');
  }
  assert.equal(await b.exited, 0);
});
