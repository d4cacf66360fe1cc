// Adds up the jest JSON reports of every project (tmp/test-results/*.json) into one closing line,
// "tests: N passed, N failed, N skipped", and exits non-zero if any test failed or no test ran. Each failed
// test is named above it with the first line of its failure, the first of a suite with the whole assertion
// (expected, received) and where in the spec it failed: the end of a long log is often all that is kept.
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
    let first = true;
    for (const test of suite.assertionResults ?? [])
      if (test.status === 'failed') {
        const message = test.failureMessages?.[0];
        console.log(`  ✕ ${test.fullName}: ${first ? assertion(message) : firstLine(message)}`);
        first = false;
      }
  }
}

/** A failure without the terminal's colours. */
function plain(message) {
  return String(message ?? '').replace(/\u001b\[[0-9;]*m/g, '');
}

/** The first line of a failure that says something, cut to 300 characters. */
function firstLine(message) {
  const line =
    plain(message)
      .split('\n')
      .find((candidate) => candidate.trim() !== '') ?? '';
  return line.trim().slice(0, 300);
}

/** A failure's message up to its stack (at most 40 lines, 3,000 characters), then its first frame in a spec. */
function assertion(message) {
  const lines = plain(message).split('\n');
  const stack = lines.findIndex((line) => /^\s+at /.test(line));
  const said = (stack < 0 ? lines : lines.slice(0, stack)).filter((line) => line.trim() !== '').slice(0, 40);
  const where = lines.find((line) => /^\s+at .*\.spec\.ts:\d+/.test(line));
  return [...said.map((line) => line.trimEnd()), ...(where ? [where.trim()] : [])]
    .join('\n      ')
    .slice(0, 3000);
}
if (failedSuites > 0) console.log(`${failedSuites} test suite(s) failed to run`);
console.log(`tests: ${passed} passed, ${failed + failedSuites} failed, ${skipped} skipped`);
process.exit(failed + failedSuites > 0 || passed === 0 ? 1 : 0);
