import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { spawnApp } from './node-app.ts';

describe('spawnApp', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'node-app-'));
    // An app that logs 100 pino-like lines and exits.
    writeFileSync(
      join(dir, 'main.mjs'),
      'for (let i = 1; i <= 100; i++) console.log(JSON.stringify({ level: 30, msg: "line", n: i }));\n',
    );
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const run = async (keepLines?: number) => {
    const app = spawnApp({
      name: 'test app',
      main: join(dir, 'main.mjs'),
      args: [],
      ...(keepLines !== undefined ? { keepLines } : {}),
    });
    await new Promise((resolve) => app.child.once('close', resolve));
    return app.lines.map((line) => line.n);
  };

  it('keeps every log line by default', async () => {
    expect(await run()).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it('keeps only the latest lines when told, in the same array', async () => {
    const kept = await run(10);
    // Trimmed to 10 whenever it passes 20: never more than 20, always the latest.
    expect(kept.length).toBeGreaterThanOrEqual(10);
    expect(kept.length).toBeLessThanOrEqual(20);
    expect(kept.at(-1)).toBe(100);
    expect(kept).toEqual(Array.from({ length: kept.length }, (_, i) => 101 - kept.length + i));
  });
});
