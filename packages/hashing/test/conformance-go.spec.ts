import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

// A second implementation (Go, standard library only) written from the README's algorithm section must agree
// with test-vectors.json: proof that the README is a complete specification.
function findGo(): string | undefined {
  const candidates = [process.env.GO_BIN, '/usr/local/go/bin/go'];
  for (const candidate of candidates) if (candidate && existsSync(candidate)) return candidate;
  try {
    return execFileSync('sh', ['-c', 'command -v go'], { encoding: 'utf8' }).trim() || undefined;
  } catch {
    return undefined;
  }
}

const go = findGo();
if (!go)
  console.warn('conformance-go: no Go toolchain found (set GO_BIN); the Go conformance check is skipped');

(go ? describe : describe.skip)('Go implementation from the README', () => {
  it('agrees with every entry of test-vectors.json', () => {
    const output = execFileSync(go!, ['run', '.', join(__dirname, '..', 'test-vectors.json')], {
      cwd: join(__dirname, '..', 'conformance', 'go'),
      encoding: 'utf8',
      // Standard library only: nothing may be downloaded.
      env: { ...process.env, GOWORK: 'off', GOTOOLCHAIN: 'local', GOPROXY: 'off', GOFLAGS: '-mod=mod' },
    });
    expect(output).toMatch(/^conformance: (\d+) checks agree\n$/);
    expect(Number(/(\d+)/.exec(output)![1])).toBeGreaterThan(300);
  }, 180_000);
});
