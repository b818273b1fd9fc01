// The chat pass-through's own per-request work on the request side, two builds in one process (A/B): parse the
// client's body, validate it, build the upstream body and serialise it. Build A sends the canonical request
// re-serialised (convertOpenAIRequest); build B (tolerant ingress) sends the client's body with the model replaced
// (create-pass-through-body.ts). Rounds alternate A and B; CPU is process.cpuUsage per round,
// so a busy host inflates both alike. Usage: npx tsx bench/gateway/chat-passthrough-body-ab.ts --a /tmp/base/dist
// [--b dist] [--rounds 20] [--requests 20000]. Not part of `npm test`.
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as RequestModule from '../../src/gateway/providers/openai/convert-openai-request.ts';
import type * as PassBodyModule from '../../src/gateway/wire/openai-chat/create-pass-through-body.ts';
import type * as ValidateModule from '../../src/gateway/ingress/openai-chat/validate-chat-request.ts';
import { createBenchChatBody } from './bench-chat-request.ts';

const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const distA = option('--a');
const distB = option('--b') ?? 'dist';
const rounds = Number(option('--rounds') ?? 20);
const requests = Number(option('--requests') ?? 20_000);
if (distA === undefined) throw new Error('--a DIR (the old dist/) is required');

const load = async <T>(dist: string, module: string): Promise<T> => (await import(pathToFileURL(resolve(dist, module)).href)) as T;
type Json = Record<string, unknown>;
type Build = (text: string, stream: boolean) => string;

async function buildA(dist: string): Promise<Build> {
  const { validateChatRequest } = await load<typeof ValidateModule>(dist, 'gateway/validate-chat-request.js');
  const { convertOpenAIRequest } = await load<typeof RequestModule>(dist, 'gateway/providers/openai/convert-openai-request.js');
  return (text, stream) => JSON.stringify(convertOpenAIRequest(validateChatRequest(JSON.parse(text)), 'gpt-4.1-2025-04-14', stream));
}

async function buildB(dist: string): Promise<Build> {
  const { validateChatRequest } = await load<typeof ValidateModule>(dist, 'gateway/validate-chat-request.js');
  const { createPassThroughBody } = await load<typeof PassBodyModule>(dist, 'gateway/providers/openai/create-pass-through-body.js');
  return (text, stream) => {
    const body = JSON.parse(text) as Json;
    validateChatRequest(body);
    return JSON.stringify(createPassThroughBody(body, 'gpt-4.1-2025-04-14', stream));
  };
}

const builds = { A: await buildA(distA), B: await buildB(distB) };
const cells = (['json', 'stream'] as const).flatMap((mode) => (['A', 'B'] as const).map((build) => ({ mode, build })));
const samples = new Map<string, number[]>();
let sink = 0;
for (let round = 0; round < rounds; round++) {
  for (const { mode, build } of round % 2 === 0 ? cells : [...cells].reverse()) {
    const text = createBenchChatBody(mode === 'stream').toString('utf8');
    const run = builds[build];
    const before = process.cpuUsage();
    for (let i = 0; i < requests; i++) sink += run(text, mode === 'stream').length;
    const used = process.cpuUsage(before);
    const key = `${mode} ${build}`;
    const list = samples.get(key) ?? [];
    list.push(((used.user + used.system) / requests) * 1000);
    samples.set(key, list);
  }
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? Number.NaN;
process.stdout.write(`rounds ${rounds} × ${requests} requests per cell (sink ${sink})\n\n| mode | A ns CPU/request | B ns CPU/request | B ÷ A |\n| --- | ---: | ---: | ---: |\n`);
for (const mode of ['json', 'stream'] as const) {
  const a = median(samples.get(`${mode} A`) ?? []);
  const b = median(samples.get(`${mode} B`) ?? []);
  process.stdout.write(`| ${mode} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / a).toFixed(3)} |\n`);
}
