// A second test reporter beside TAP: after the run, the failed tests again, each with its file and error, so the
// last lines of a long CI log say what failed (TAP prints a failure where it happened, thousands of lines up).
const MAX_LISTED = 40;

function describeError(error) {
  const cause = error?.cause ?? error;
  if (cause === undefined || cause === null) return 'no error given';
  const text = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
  return text.split('\n').slice(0, 12).join('\n      ');
}

export default async function* failureSummary(source) {
  const failed = [];
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    // A suite fails when a test in it does: the test itself is listed, not its suites again.
    if (details?.error?.failureType === 'subtestsFailed') continue;
    failed.push({ name, file, error: details?.error });
  }
  if (failed.length === 0) return;
  yield `\n# ${failed.length} failed test(s):\n`;
  for (const f of failed.slice(0, MAX_LISTED)) {
    yield `#   ✖ ${f.name}\n#     ${f.file ?? 'unknown file'}\n#     ${describeError(f.error).replaceAll('\n', '\n#')}\n`;
  }
  if (failed.length > MAX_LISTED) yield `#   … and ${failed.length - MAX_LISTED} more\n`;
}
