// What the browser suites accept from Chromium's "Failed to load resource" lines: the console asking for a
// session it does not have yet (GET ./api/session → 401 before sign-in and after sign-out), and the refusals
// a test provoked on purpose (`expected`, absolute URLs).
import type { ResourceFailure } from '../helpers/browser.ts';

export function unexpectedFailures(failures: readonly ResourceFailure[], expected: readonly ResourceFailure[] = []): ResourceFailure[] {
  return failures.filter((f) => !(f.status === 401 && new URL(f.url).pathname.endsWith('/ui/api/session')) && !expected.some((e) => e.url === f.url && e.status === f.status));
}
