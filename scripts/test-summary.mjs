// Adds up the jest JSON reports of every project (tmp/test-results/*.json) into one closing line,
// "tests: N passed, N failed, N skipped", and exits non-zero if any test failed or no test ran. Each failed
// test is named above it with the first line of its failure: the end of a long log is often all that is kept.
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
  for (const suite of report.testResults ?? []) {
    if (suite.status === 'failed' && (suite.assertionResults ?? []).length === 0)
      console.log(`  ✕ ${suite.name}: ${firstLine(suite.message)}`);
    for (const test of suite.assertionResults ?? [])
      if (test.status === 'failed')
        console.log(`  ✕ ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
  }
}

/** The first line of a failure that says something, without the terminal's colours, cut to 300 characters. */
function firstLine(message) {
  const plain = String(message ?? '').replace(/\u001b\[[0-9;]*m/g, '');
  const line = plain.split('\n').find((candidate) => candidate.trim() !== '') ?? '';
  return line.trim().slice(0, 300);
}
if (failedSuites > 0) console.log(`${failedSuites} test suite(s) failed to run`);
console.log(`tests: ${passed} passed, ${failed + failedSuites} failed, ${skipped} skipped`);
process.exit(failed + failedSuites > 0 || passed === 0 ? 1 : 0);
