// tritonserver's --trace-config and deprecated --trace-* flags read as command_line_parser.cc reads them: the
// values, Triton's error words and warnings, and the result carried in herd.yaml's serving.trace by `herd serve`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { test } from 'node:test';
import type { Command } from 'commander';
import { createHerdProgram } from '../../src/cli/create-herd-program.ts';
import { parseTraceConfig, type TraceFlags } from '../../src/cli/parse-trace-config.ts';
import { resolveServeConfig, type ServeFlags } from '../../src/cli/serve-command.ts';
import { listIgnoredTritonFlags } from '../../src/cli/triton-compat-flags.ts';
import { HerdError } from '../../src/core/errors.ts';

const parse = (flags: TraceFlags, env: Record<string, string> = {}) => parseTraceConfig(flags, undefined, env);
const config = (...traceConfig: string[]) => parse({ traceConfig }).trace;

function refuses(flags: TraceFlags, message: string, env: Record<string, string> = {}): void {
  assert.throws(
    () => parse(flags, env),
    (err: unknown) => {
      assert.ok(err instanceof HerdError, String(err));
      assert.equal(err.code, 'INVALID_ARG');
      assert.equal(err.message, message);
      return true;
    },
    JSON.stringify(flags),
  );
}

test("the defaults are tritonserver's: triton mode, OFF, rate 1000, count -1, no file", () => {
  const trace = config();
  assert.deepEqual([trace.mode, trace.level, trace.rate, trace.count, trace.triton.file, trace.triton.log_frequency], ['triton', ['OFF'], 1000, -1, '', 0]);
});

test('global and Triton-mode settings, levels OR-ed together in any case, OFF anywhere turning tracing off', () => {
  const trace = config('level=TIMESTAMPS', 'level=tensors', 'rate=1', 'count=5', 'triton,file=/tmp/t.json', 'triton,log-frequency=50', 'triton,foo=bar');
  assert.deepEqual(trace.level, ['TIMESTAMPS', 'TENSORS']);
  assert.deepEqual([trace.rate, trace.count, trace.triton.file, trace.triton.log_frequency], [1, 5, '/tmp/t.json', 50]);
  assert.deepEqual(trace.triton.other, { foo: 'bar' }, 'kept and echoed by the settings API, as Triton does');
  assert.deepEqual(config('level=min').level, ['TIMESTAMPS'], "Triton's old names mean TIMESTAMPS");
  assert.deepEqual(config('level=TIMESTAMPS', 'level=OFF', 'level=TENSORS').level, ['OFF']);
  assert.deepEqual(config('rate=-1').rate, 2 ** 32 - 1, 'an int handed to a uint32, as Triton does');
  assert.equal(config('count=-5').count, -5, 'the command line does not check count >= -1 (the API does)');
  assert.equal(config('rate=12abc').rate, 12, 'std::stoi reads the leading digits');
  assert.equal(config('mode=triton', 'opentelemetry,url=http://x:4318/v1/traces').opentelemetry.url, undefined, "another mode's settings are not used");
});

test('OpenTelemetry mode: url, resources split at the first =, bsp_* from flags, OTEL_BSP_* or defaults', () => {
  const { trace } = parse(
    {
      traceConfig: [
        'mode=opentelemetry',
        'level=TIMESTAMPS',
        'opentelemetry,url=localhost:4318/v1/traces',
        'opentelemetry,resource=service.name=my-triton',
        'opentelemetry,resource=a=b=c',
        'opentelemetry,resource=bare',
        'opentelemetry,bsp_max_queue_size=1',
        'opentelemetry,extra=1',
        'triton,file=ignored.json',
      ],
    },
    { OTEL_BSP_SCHEDULE_DELAY: '250' },
  );
  assert.equal(trace.mode, 'opentelemetry');
  assert.equal(trace.opentelemetry.url, 'localhost:4318/v1/traces');
  assert.deepEqual(trace.opentelemetry.resource, { 'service.name': 'my-triton', a: 'b=c', bare: 'bare' });
  assert.deepEqual([trace.opentelemetry.bsp_max_queue_size, trace.opentelemetry.bsp_schedule_delay, trace.opentelemetry.bsp_max_export_batch_size], [1, 250, 512]);
  assert.deepEqual(trace.opentelemetry.other, { extra: '1' });
  assert.equal(trace.triton.file, '', 'triton settings are not used in opentelemetry mode');
  assert.equal(config('mode=opentelemetry', 'opentelemetry,bsp_schedule_delay=-1').opentelemetry.bsp_schedule_delay, 2 ** 32 - 1, 'std::stoul wraps a minus sign');
});

test("Triton's error words for bad values", () => {
  refuses({ traceConfig: ['rate=abc'] }, 'Bad option: "--trace-config rate".\nInvalid option value. Got abc');
  refuses({ traceConfig: ['count=99999999999'] }, 'Bad option: "--trace-config count".\nProvided option value is out of bound. Got 99999999999');
  refuses({ traceConfig: ['level=LOUD'] }, 'Bad option: "--trace-config level".\ninvalid value for trace level option: loud');
  refuses({ traceConfig: ['mode=jaeger'] }, 'Bad option: "--trace-config mode".\ninvalid value for trace mode option: jaeger. Available options are "triton" and "opentelemetry"');
  refuses({ traceConfig: ['jaeger,url=x'] }, 'Bad option: "--trace-config".\ninvalid value for trace mode option: jaeger. Available options are "triton" and "opentelemetry"');
  refuses(
    { traceConfig: [',rate=1'] },
    'Bad option: "--trace-config".\nNo trace mode specified. --trace-config option format is <trace mode>,<setting>=<value> or <setting>=<value>. Got ,rate=1',
  );
  refuses({ traceConfig: ['rate'] }, 'Bad option: "--trace-config".\n--trace-config option format is \'<trace mode>,<setting>=<value>\'. Got rate');
  refuses({ traceConfig: ['triton,file='] }, 'Bad option: "--trace-config".\n--trace-config option format is \'<trace mode>,<setting>=<value>\'. Got triton,file=');
  refuses({ traceConfig: ['triton,log-frequency=often'] }, 'Bad option: "--trace-config triton,log-frequency".\nInvalid option value. Got often');
  refuses(
    { traceConfig: ['mode=opentelemetry', 'opentelemetry,bsp_max_queue_size=many'] },
    'Bad option: "--trace-config opentelemetry,bsp_max_queue_size".\nInvalid option value. Got many',
  );
  refuses({ traceConfig: ['mode=opentelemetry'] }, 'Bad option: "OTEL_BSP_MAX_EXPORT_BATCH_SIZE".\nInvalid option value. Got lots', { OTEL_BSP_MAX_EXPORT_BATCH_SIZE: 'lots' });
  refuses({ traceRate: 'fast' }, 'Bad option: "--trace-rate".\nInvalid option value. Got fast');
  refuses({ traceLevel: ['loud'] }, 'Bad option: "--trace-level".\ninvalid value for trace level option: loud');
  // Triton does not check a setting of the mode it is not in.
  assert.equal(config('opentelemetry,bsp_max_queue_size=many').mode, 'triton');
});

test("the deprecated flags still work, with Triton's warnings; --trace-config wins over them", () => {
  const { trace, warnings } = parse({ traceFile: '/tmp/old.json', traceLevel: ['TIMESTAMPS'], traceRate: '7', traceCount: '3', traceLogFrequency: '2' });
  assert.deepEqual([trace.triton.file, trace.level, trace.rate, trace.count, trace.triton.log_frequency], ['/tmp/old.json', ['TIMESTAMPS'], 7, 3, 2]);
  assert.equal(warnings[0], "'--trace-file' has been deprecated and will be removed in future releases. Please use '--trace-config triton,file=<filepath> instead.");
  assert.equal(warnings.length, 5);
  const both = parse({ traceRate: '7', traceFile: '/tmp/old.json', traceConfig: ['rate=9', 'triton,file=/tmp/new.json'] });
  assert.deepEqual([both.trace.rate, both.trace.triton.file], [9, '/tmp/new.json']);
  assert.ok(both.warnings.includes("Overriding deprecated '--trace-rate' in favor of provided rate value in --trace-config!"));
  assert.ok(both.warnings.includes("Overriding deprecated '--trace-file' in favor of provided file in --trace-config!"));
  const otel = parse({ traceFile: '/tmp/old.json', traceConfig: ['mode=opentelemetry'] });
  assert.ok(otel.warnings.includes("'--trace-file' is deprecated and will be ignored with opentelemetry tracing mode. "));
});

/** The serve command's parsed flags, without starting anything. */
async function parseServe(args: string[]): Promise<ServeFlags & Record<string, unknown>> {
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

test('`herd tritonserver` takes the flags in both forms into serving.trace; without them herd.yaml stays', async () => {
  const repository = resolve('test/fixtures/slow_repository');
  const flags = await parseServe([
    'tritonserver',
    `--model-repository=${repository}`,
    '--trace-config=mode=opentelemetry',
    '--trace-config',
    'rate=1',
    '--trace-config=opentelemetry,url=http://127.0.0.1:4318/v1/traces',
    '--trace-level=TIMESTAMPS',
  ]);
  const trace = resolveServeConfig(flags).serving.trace;
  assert.deepEqual([trace.mode, trace.rate, trace.level, trace.opentelemetry.url], ['opentelemetry', 1, ['TIMESTAMPS'], 'http://127.0.0.1:4318/v1/traces']);
  assert.ok(listIgnoredTritonFlags(flags).some((w) => w.startsWith("'--trace-level' has been deprecated")));
  const plain = resolveServeConfig(await parseServe(['serve', '--model-repository', repository])).serving.trace;
  assert.deepEqual([plain.mode, plain.level, plain.rate], ['triton', ['OFF'], 1000]);
  assert.throws(() => resolveServeConfig({ modelRepository: [repository], traceConfig: ['rate=x'] } as ServeFlags), /Bad option: "--trace-config rate"/);
});

/** `herd tritonserver …` as a child process: its output so far, a wait for a line, its exit code. */
function startHerd(extra: string[]) {
  const args = [resolve('bin/herd.mjs'), 'tritonserver', `--model-store=${resolve('test/fixtures/slow_repository')}`, '--host=127.0.0.1', '--drain-grace-secs=0'];
  const child = spawn(process.execPath, [...args, '--http-port=0', '--grpc-port=0', '--metrics-port=0', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
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
}

test('the flags reach the running server: /v2/trace/setting answers them; a bad one stops it with Triton words', async () => {
  const herd = startHerd([
    '--trace-config=mode=opentelemetry',
    '--trace-config=level=TIMESTAMPS',
    '--trace-config',
    'opentelemetry,url=localhost:4318/v1/traces',
    '--trace-config=opentelemetry,resource=service.name=edge',
    '--trace-rate=3',
  ]);
  try {
    const [, url] = (await herd.waitFor(/Started HTTPService at \S+ \((http:\/\/[^)]+)\)/)) as RegExpExecArray;
    const answer = (await (await fetch(`${url}/v2/trace/setting`)).json()) as Record<string, unknown>;
    assert.deepEqual(answer, {
      trace_level: ['TIMESTAMPS'],
      trace_rate: '3',
      trace_count: '-1',
      trace_mode: 'opentelemetry',
      url: 'localhost:4318/v1/traces',
      resource: 'service.name=edge',
      bsp_max_queue_size: '2048',
      bsp_schedule_delay: '5000',
      bsp_max_export_batch_size: '512',
    });
    assert.match(herd.output(), /warning: '--trace-rate' has been deprecated and will be removed in future releases/);
  } finally {
    herd.child.kill('SIGTERM');
  }
  assert.equal(await herd.exited, 0);

  const bad = startHerd(['--trace-config=count=many']);
  assert.equal(await bad.exited, 1);
  assert.match(bad.output(), /herd: Bad option: "--trace-config count"\.\nInvalid option value\. Got many/);
});
