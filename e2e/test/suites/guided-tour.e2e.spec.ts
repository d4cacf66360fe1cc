import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** The README's guided tour: the shell blocks between its tour markers, in order. */
function tourBlocks(): string[] {
  const readme = readFileSync(`${ROOT}/README.md`, 'utf8');
  const tour = /<!-- tour:start -->([\s\S]*?)<!-- tour:end -->/.exec(readme)?.[1];
  if (!tour) throw new Error('README.md has no <!-- tour:start --> … <!-- tour:end --> section');
  return [...tour.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]!.trim());
}

/** Runs one block in bash in the repository, after the exports of the blocks before it (one shell session). */
function runBlock(block: string, exports: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env };
    delete env['KUBECONFIG'];
    const child = spawn('bash', ['-euo', 'pipefail', '-c', [...exports, block].join('\n')], {
      cwd: ROOT,
      env,
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describeE2e('the README guided tour, as written', () => {
  // The tour brings up a federation of its own in tmp/cells; the suite's environment only says the tools are there.
  e2eEnv();
  const blocks = tourBlocks();
  let federation: ChildProcess | undefined;
  let federationOut = '';

  afterAll(async () => {
    if (federation && federation.exitCode === null && federation.signalCode === null) {
      process.kill(-federation.pid!, 'SIGKILL');
      await new Promise((resolve) =>
        spawn('node', ['tools/cells/src/cli/cells.ts', 'down'], { cwd: ROOT, stdio: 'ignore' }).on(
          'exit',
          resolve,
        ),
      );
    }
  });

  it('has the terminal-1 command and four steps', () => {
    expect(blocks[0]).toBe('npm start');
    expect(blocks).toHaveLength(5);
  });

  it('runs every step: the federation, objects and where they live, a cell added and rebalanced, a cell killed and failed over', async () => {
    // Terminal 1, in its own process group as a terminal runs it, so Ctrl-C reaches every process.
    federation = spawn('bash', ['-c', blocks[0]!], { cwd: ROOT, detached: true, env: process.env });
    const running = new Promise<void>((resolve, reject) => {
      federation!.stdout!.on('data', (chunk: Buffer) => {
        federationOut += chunk.toString();
        if (federationOut.includes('cellfed is running')) resolve();
      });
      federation!.stderr!.on('data', (chunk: Buffer) => (federationOut += chunk.toString()));
      federation!.once('exit', (code) =>
        reject(new Error(`npm start exited (${code}) early:\n${federationOut.slice(-3000)}`)),
      );
    });
    await running;

    const exports: string[] = [];
    const outputs: string[] = [];
    for (const block of blocks.slice(1)) {
      const { code, out } = await runBlock(block, exports);
      outputs.push(out);
      if (code !== 0)
        throw new Error(`this tour step failed (exit ${code}):\n${block}\n--- output ---\n${out}`);
      exports.push(...block.split('\n').filter((line) => line.startsWith('export ')));
    }
    const [look, create, grow, fail] = outputs as [string, string, string, string];
    // The federation as `npm start` left it: three Normal cells.
    expect(look).toMatch(/^cell-1\s+Normal\s+1\s/m);
    expect(look).toMatch(/^cell-3\s+Normal\s+1\s/m);
    // Thirty ConfigMaps through the router, and where the Deployment lives.
    expect(create).toMatch(/^30$/m);
    expect(create).toMatch(/demo\/web\s+demo\/web\s+cell-\d\s+cell-\d\s+settled/);
    // The fourth cell joined, was filled, and is Normal; the objects are all there.
    expect(grow).toMatch(/^\d+ of \d+ objects would move/m);
    expect(grow).toContain('cell cell-4: add requested; done');
    expect(grow).toMatch(/^cell-4\s+Normal\s+1\s/m);
    expect(grow).toContain('configmap/app-3');
    // A killed cell marked Down: every object readable, writable, the cell Down.
    expect(fail).toContain('cell-2: kube-apiserver and etcd killed');
    expect(fail).toContain('cell cell-2: down requested; done');
    expect(fail).toMatch(/^30$/m);
    expect(fail.match(/labeled/g)).toHaveLength(3);
    expect(fail).toMatch(/^cell-2\s+Down\s/m);

    // Ctrl-C in terminal 1 reaches every process of its group; the federation stops the controllers, the
    // router and every cell, and its output closes once the last of its processes has ended.
    const closed = new Promise<void>((resolve) => federation!.stdout!.once('close', () => resolve()));
    process.kill(-federation.pid!, 'SIGINT');
    await closed;
    expect(federationOut).toContain('stopping every cell');
  }, 600_000);
});
