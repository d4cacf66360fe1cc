// Adds up the jest JSON reports of every project (tmp/test-results/*.json) into one closing line,
// "tests: N passed, N failed, N skipped", and exits non-zero if any test failed or no test ran.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? 'tmp/test-results';
const reports = existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.json')) : [];
let passed = 0;
let failed = 0;
let skipped = 0;
let failedSuites = 0;
for (const file of reports) {
  const report = JSON.parse(readFileSync(join(dir, file), 'utf8'));
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += report.numPendingTests + report.numTodoTests;
  failedSuites += report.numRuntimeErrorTestSuites ?? 0;
  console.log(
    `${file.replace(/\.json$/, '')}: ${report.numPassedTests} passed, ${report.numFailedTests} failed`,
  );
}
if (failedSuites > 0) console.log(`${failedSuites} test suite(s) failed to run`);
console.log(`tests: ${passed} passed, ${failed + failedSuites} failed, ${skipped} skipped`);
process.exit(failed + failedSuites > 0 || passed === 0 ? 1 : 0);
