// Batch submission's validation alone (src/gateway/batch/validate-batch-file.ts): a synthetic 100,000-line chat
// JSONL file held in memory as 64 KB-ish chunks, validated as submission does (JSONL line source, chat codec,
// route, key's models, max cost), with the prompt counted by byte bound and by tokenizer. Reports lines/s by
// wall clock and per CPU-second (the machine is shared). Through tsx, so slower than dist/. Not a benchmark of record.
// Usage: npx tsx bench/batch/validate-batch-microbench.ts [--lines 100000] [--runs 2]
import { parseArgs } from 'node:util';
import { chatBody, openaiLine, openFixture, runValidation } from '../../test/gateway/batch/batch-validate-fixtures.ts';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '100000' }, runs: { type: 'string', default: '2' } } });
const count = Number(values.lines);
const runs = Number(values.runs);

const review = 'The parcel arrived on time, the product works as described and the battery lasts all day. '.repeat(4);
const template = openaiLine('ID', chatBody(`Classify the sentiment of this review as positive, neutral or negative: ${review}`, 'gpt-4.1', { max_tokens: 5 }));
const [head, tail] = template.split('"ID"') as [string, string];
const chunks: Buffer[] = [];
for (let i = 0; i < count; i += 100) {
  const lines = [];
  for (let j = i; j < Math.min(count, i + 100); j++) lines.push(`${head}"req-${j}"${tail}`);
  chunks.push(Buffer.from(`${lines.join('\n')}\n`));
}
const bytes = chunks.reduce((sum, c) => sum + c.length, 0);
async function* file(): AsyncGenerator<Buffer> {
  for (const chunk of chunks) yield chunk;
}

const fixture = await openFixture();
try {
  console.log(`${count} lines, ${bytes} bytes`);
  for (const promptCount of ['upper-bound', 'exact'] as const) {
    for (let run = 0; run < runs; run++) {
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const { result } = await runValidation(fixture, file(), { promptCount, onLine: () => {} });
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      const cpuMs = (cpu.user + cpu.system) / 1000;
      if (!result.ok || result.total !== count) throw new Error(`validation failed: ${JSON.stringify(result.errors.slice(0, 3))}`);
      console.log(
        `${promptCount.padEnd(11)} wall ${ms.toFixed(0)} ms, CPU ${cpuMs.toFixed(0)} ms: ${((count / ms) * 1000).toFixed(0)} lines/s wall, ${((count / cpuMs) * 1000).toFixed(0)} lines/s per CPU-second`,
      );
    }
  }
} finally {
  await fixture.close();
}
