import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect as http2Connect, type ClientHttp2Session } from 'node:http2';
import { setTimeout as sleep } from 'node:timers/promises';
import { connect } from 'node:tls';

import { Agent, request, type Dispatcher } from 'undici';

import { clientsFor, grantRole, newServiceAccountToken } from '../helpers/clients.ts';
import { describeE2e, e2eEnv } from '../helpers/e2e-env.ts';
import { answersOnOneConnection } from '../helpers/one-connection.ts';
import { recordProof } from '../helpers/proof-results.ts';
import { controlPlanePki, startRouter, stopRouter, type RouterProcess } from '../helpers/router-process.ts';
import { RequestFuzzer, seededRandom, type FuzzRequest } from '../helpers/router-fuzz.ts';

/** 100k for the record (`npx nx run e2e:proof`); a 10k sample in every test run, to keep CI short. */
const REQUESTS = Number(process.env['CELLFED_FUZZ_REQUESTS'] ?? 10_000);
/** Of them, malformed at the HTTP level (sent as raw bytes): Node's parser refuses these before the router. */
const RAW_REQUESTS = Math.round(REQUESTS / 100);
/** The router's memory is measured once this share of the requests is answered (warm), and at the end. */
const WARM_UP_SHARE = 0.2;
/** Requests smuggled behind upgrades by a caller with no rights (each on a connection of its own). */
const SMUGGLING_ATTEMPTS = Math.max(50, Math.round(REQUESTS / 200));
/** A request without an answer this long is counted as unanswered and left. */
const ANSWER_WITHIN_MS = 15_000;
const CONCURRENCY = 32;
/** Connections of a caller with no rights, each sending a 3 MiB create but its last byte (300 for the record). */
const BODY_FLOOD = Number(process.env['CELLFED_FUZZ_BODY_FLOOD'] ?? 100);
/**
 * Watches of one tenant that never read (1,000 for the record); past the router's per-caller limit of
 * long-running requests (`--max-long-running-per-caller`, its default given here) each is a 429.
 */
const SLOW_WATCHERS = Number(process.env['CELLFED_FUZZ_SLOW_WATCHERS'] ?? 300);
const LONG_RUNNING_PER_CALLER = 250;
/** What all watches may hold for their clients here (`--max-watch-bytes-held`): the flood runs into it. */
const WATCH_BYTES_HELD = 32 * 1024 * 1024;
/**
 * The memory goals under the flood: the router's RSS after the body flood (3 GiB of bodies sent, none of
 * them the caller's to send: before bodies were authorized first, it grew by 2.2 GB), and at its peak through
 * the watches, heap garbage and all (a sixth of the chart's 3 GiB limit; 1,000 watches of one tenant all
 * served grew it by 1.2 GB, before the per-caller limit of 250).
 */
const BODY_FLOOD_RSS_GROWTH_MIB = 128;
const FLOOD_RSS_GROWTH_MIB = 512;
const SEED = Number(process.env['CELLFED_FUZZ_SEED'] ?? 20261123);

interface Answer {
  code: number;
  contentType: string;
  body: string;
}

/**
 * Error codes of a client library refusing to send a request at all (a header value it will not put on the
 * wire): the router never saw those.
 */
const NOT_SENT =
  /^(UND_ERR_INVALID_ARG|UND_ERR_NOT_SUPPORTED|ERR_INVALID_CHAR|ERR_INVALID_HTTP_TOKEN|ERR_HTTP2_INVALID_\w+|ERR_HTTP2_HEADER_SINGLE_VALUE)$/;

/** What makes an answer wrong: a 5xx, or an error that is not a Kubernetes Status. */
function problemWith(transport: string, sent: { method: string }, answer: Answer): string | undefined {
  const problem = judge(sent, answer);
  return problem && `${transport}: ${problem}`;
}

function judge(sent: { method: string }, answer: Answer): string | undefined {
  if (answer.code >= 500) return `${answer.code}`;
  if (answer.code < 300 || answer.code === 101 || sent.method === 'HEAD') return undefined;
  // A client that asked for protobuf gets the Status in protobuf (its magic, then the kind).
  if (
    answer.contentType.includes('protobuf') &&
    answer.body.startsWith('k8s\u0000') &&
    answer.body.includes('Status')
  )
    return undefined;
  let status: { kind?: string; code?: number } | undefined;
  try {
    status = JSON.parse(answer.body) as typeof status;
  } catch {
    return `${answer.code}, not a Status (${answer.contentType || 'no content-type'}${answer.body ? '' : ', empty'})`;
  }
  if (status?.kind !== 'Status' || status.code !== answer.code)
    return `${answer.code}, not a matching Status`;
  return undefined;
}

/** `work`'s value, or `otherwise` if it takes longer than {@link ANSWER_WITHIN_MS}; no timer is left behind. */
async function within<T>(work: Promise<T>, otherwise: T): Promise<T> {
  const timer = new AbortController();
  try {
    return await Promise.race([
      work,
      sleep(ANSWER_WITHIN_MS, otherwise, { signal: timer.signal }).catch(() => otherwise),
    ]);
  } finally {
    timer.abort();
  }
}

/** Malformed HTTP/1.1 messages. */
function rawMessages(count: number): string[] {
  const random = seededRandom(SEED + 1);
  const shapes = [
    () => 'GARBAGE\r\n\r\n',
    () => 'GET /api/v1/namespaces HTTP/9.9\r\nHost: x\r\n\r\n',
    () => 'GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n',
    () =>
      `GET /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000 + Math.floor(random() * 50_000))}\r\n\r\n`,
    () =>
      'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\nhello',
    () =>
      'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZZ\r\nabc\r\n0\r\n\r\n',
    () => 'POST /api/v1/namespaces/default/configmaps HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
    () => `GET /${'%'.repeat(50)} HTTP/1.1\r\nHost: x\r\n\r\n`,
    () => '\u0000\u0001\u0002\u0003\r\n\r\n',
    () => `GET /api HTTP/1.1\r\n${Array.from({ length: 3000 }, (_, i) => `X-${i}: v`).join('\r\n')}\r\n\r\n`,
    // Upgrades (exec, attach, port-forward) of objects that do not exist, and of paths that take none.
    () =>
      'POST /api/v1/namespaces/default/pods/nothing-here/exec?command=sh HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n',
    () =>
      'GET /api/v1/namespaces/default/configmaps/x HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n',
    () => `GET /${'%zz/'.repeat(20)} HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n`,
  ];
  return Array.from({ length: count }, () => shapes[Math.floor(random() * shapes.length)]!());
}

/**
 * An upgrade request with requests pipelined behind it in the same write, as a caller with `token` sends
 * it: one kube-apiserver answers the upgrade (or refuses it) and nothing else on that connection.
 */
function smugglingMessages(count: number, token: string): string[] {
  const random = seededRandom(SEED + 2);
  const pick = <T>(items: readonly T[]) => items[Math.floor(random() * items.length)]!;
  const auth = `Authorization: Bearer ${token}`;
  const upgrades = [
    `POST /api/v1/namespaces/default/pods/nothing-here/exec?command=sh&stdout=true HTTP/1.1\r\nHost: x\r\n${auth}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n`,
    `GET /api/v1/namespaces/default/pods/nothing-here/attach?stdout=true HTTP/1.1\r\nHost: x\r\n${auth}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: AQIDBAUGBwgJCgsMDQ4PEA==\r\n\r\n`,
    `POST /api/v1/namespaces/default/pods/nothing-here/portforward HTTP/1.1\r\nHost: x\r\n${auth}\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\n\r\n`,
    `GET /api/v1/namespaces/default/configmaps/x HTTP/1.1\r\nHost: x\r\n${auth}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
    `GET /api/v1/namespaces/default/services/nothing-here/proxy/ HTTP/1.1\r\nHost: x\r\n${auth}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\n`,
  ];
  const smuggled = [
    'GET /api/v1/namespaces/kube-system/secrets HTTP/1.1\r\nHost: x\r\n\r\n',
    `GET /api/v1/configmaps HTTP/1.1\r\nHost: x\r\n${auth}\r\n\r\n`,
    'DELETE /apis/cells.cellfed.io/v1alpha1/cellsets/default HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n',
    `POST /api/v1/namespaces HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 41\r\n\r\n{"metadata":{"name":"smuggled-by-fuzz"}}`,
  ];
  return Array.from({ length: count }, () => {
    const behind = Array.from({ length: 1 + Math.floor(random() * 3) }, () => pick(smuggled));
    return pick(upgrades) + behind.join('');
  });
}

/**
 * HTTP/2 requests over a few sessions of Node's own client, opened again when one ends (undici's HTTP/2
 * client stalls a whole session on some hostile requests, so it cannot judge the router).
 */
function http2Sender(url: string, tls: object, sessions: number) {
  const open: (ClientHttp2Session | undefined)[] = Array.from({ length: sessions }, () => undefined);
  let next = 0;
  const session = () => {
    const slot = next++ % sessions;
    let current = open[slot];
    if (!current || current.closed || current.destroyed) {
      // Uploads of 4 MiB queue in the client's own session: with Node's default limit (10 MB) the client
      // itself would refuse the router's answers (ENHANCE_YOUR_CALM) while they wait.
      current = http2Connect(url, { ...tls, maxSessionMemory: 1024 });
      current.on('error', () => undefined);
      open[slot] = current;
    }
    return current;
  };
  return {
    send: (method: string, path: string, headers: Record<string, string | string[]>, body?: Buffer) =>
      new Promise<Answer>((resolve, reject) => {
        // Node ends a DELETE's stream with its headers unless told otherwise: its body would be lost.
        const stream = session().request(
          { ':method': method, ':path': path, ...headers },
          { endStream: !body },
        );
        let code = 0;
        let contentType = '';
        const chunks: Buffer[] = [];
        stream.setTimeout(60_000, () => stream.close());
        stream.on('response', (head) => {
          code = Number(head[':status']);
          contentType = String(head['content-type'] ?? '');
          // A watch streams for as long as asked: its head is what is judged.
          if (code === 200 && path.includes('watch')) stream.close();
        });
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        // The answer is whole at its end: a stream the router resets with NO_ERROR after an early answer stays
        // open in Node's client while it still has body to write.
        const answered = () => {
          resolve({ code, contentType, body: Buffer.concat(chunks).toString() });
          if (!stream.closed) stream.close();
        };
        stream.on('end', () => (code ? answered() : undefined));
        stream.on('close', () =>
          code
            ? answered()
            : reject(new Error(`HTTP/2 stream reset without an answer (code ${stream.rstCode})`)),
        );
        stream.on('error', () => undefined);
        if (body) stream.end(body);
      }),
    close: () => open.forEach((one) => one?.destroy()),
  };
}

describeE2e('proof: 100k malformed and hostile requests at the router', () => {
  const env = e2eEnv();
  const pki = controlPlanePki(env);
  const tls = { ca: readFileSync(join(pki, 'ca.crt')), servername: 'localhost' };
  const adminTls = {
    ...tls,
    cert: readFileSync(join(pki, 'admin.crt')),
    key: readFileSync(join(pki, 'admin.key')),
  };
  let router: RouterProcess | undefined;
  const agents: Dispatcher[] = [];
  const closers: (() => void)[] = [];

  afterAll(async () => {
    await stopRouter(router);
    for (const agent of agents) await agent.destroy().catch(() => undefined);
    for (const close of closers) close();
  });

  /** An HTTP/1.1 agent (undici offers HTTP/2 by default; the HTTP/2 share goes through Node's client). */
  const agent = (options: ConstructorParameters<typeof Agent>[0]) => {
    const made = new Agent({ ...options, allowH2: false });
    agents.push(made);
    return made;
  };

  const rssKiB = (pid: number) =>
    Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? Number.NaN);

  it(`answers all ${REQUESTS}, errors as Kubernetes Statuses and none with a 5xx, and keeps serving`, async () => {
    router = await startRouter(env, { logFile: join(env.dir, 'router-fuzz.log') });
    const { port } = new URL(router.url);
    const dispatchers = {
      admin: agent({ connect: adminTls, connections: 16 }),
      anonymous: agent({ connect: tls, connections: 4 }),
      'bad-token': agent({ connect: tls, connections: 4 }),
    };
    const h2 = http2Sender(router.url, adminTls, 4);
    closers.push(() => h2.close());
    const rssBefore = rssKiB(router.child.pid!);
    let rssWarm = Number.NaN;
    const fuzzer = new RequestFuzzer(SEED);
    const problems = new Map<string, { count: number; example: string }>();
    const codes = new Map<number, number>();
    let notSent = 0;
    let resets = 0;
    let unanswered = 0;
    let sent = 0;
    const note = (problem: string | undefined, example: FuzzRequest | string) => {
      if (!problem) return;
      const seen = problems.get(problem) ?? { count: 0, example: JSON.stringify(example).slice(0, 300) };
      seen.count++;
      problems.set(problem, seen);
    };
    /** A request the client library would not send (a header it refuses), or one sent and never answered. */
    const failed = (transport: string, error: unknown, fuzz: FuzzRequest) => {
      const { code, message } = error as { code?: string; message: string };
      if (code && NOT_SENT.test(code)) {
        notSent++;
        note(`${transport}: not sent by the client (${code})`, fuzz);
      } else {
        resets++;
        note(`${transport}: no answer (${code ?? message.slice(0, 60)})`, fuzz);
      }
    };
    const started = Date.now();
    const send = async (fuzz: FuzzRequest) => {
      // One in five of the admin's requests over HTTP/2, as kubectl and client-go send them. HTTP/2 has no
      // connection-specific headers (RFC 9113 §8.2.2): those go over HTTP/1.1 only.
      if (fuzz.as === 'admin' && sent % 5 === 0 && fuzz.headers['connection'] === undefined) {
        try {
          const answer = await h2.send(fuzz.method, fuzz.path, fuzz.headers, fuzz.body);
          codes.set(answer.code, (codes.get(answer.code) ?? 0) + 1);
          note(problemWith('h2', fuzz, answer), fuzz);
        } catch (error) {
          failed('h2', error, fuzz);
        }
        return;
      }
      const dispatcher = dispatchers[fuzz.as];
      try {
        const answer = await request(`${router!.url}${fuzz.path}`, {
          dispatcher,
          method: fuzz.method as Dispatcher.HttpMethod,
          headers: fuzz.headers,
          ...(fuzz.body ? { body: fuzz.body } : {}),
          headersTimeout: 60_000,
          bodyTimeout: 60_000,
        });
        // Watches would stream for as long as asked: the head of the answer is what is judged.
        const body = fuzz.path.includes('watch') && answer.statusCode === 200 ? '' : await answer.body.text();
        if (!body) {
          // Ending a watch early aborts its body: that error is the test's own doing.
          answer.body.once('error', () => undefined);
          answer.body.destroy();
        }
        codes.set(answer.statusCode, (codes.get(answer.statusCode) ?? 0) + 1);
        note(
          problemWith('h1', fuzz, {
            code: answer.statusCode,
            contentType: String(answer.headers['content-type'] ?? ''),
            body,
          }),
          fuzz,
        );
      } catch (error) {
        failed('h1', error, fuzz);
      }
    };
    const workers = Array.from({ length: CONCURRENCY }, async () => {
      while (sent < REQUESTS - RAW_REQUESTS) {
        sent++;
        const fuzz = fuzzer.next();
        const answered = await within(
          send(fuzz).then(() => true),
          false,
        );
        if (!answered) {
          unanswered++;
          note('unanswered', fuzz);
        }
        if (sent === Math.round(REQUESTS * WARM_UP_SHARE)) rssWarm = rssKiB(router!.child.pid!);
        if (sent % 10_000 === 0)
          process.stdout.write(
            `router fuzz: ${sent} sent, ${Math.round(sent / ((Date.now() - started) / 1000))}/s\n`,
          );
      }
    });
    await Promise.all(workers);
    // Malformed HTTP/1.1, straight onto TLS sockets, 32 at a time. An answer is complete at the end of its
    // headers plus its content-length, or when the router closes the connection.
    const complete = (text: string) => {
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return false;
      const length = /content-length: (\d+)/i.exec(text.slice(0, end))?.[1];
      return length !== undefined && Buffer.byteLength(text.slice(end + 4), 'latin1') >= Number(length);
    };
    const rawAnswer = (message: string) =>
      new Promise<string>((resolve) => {
        const socket = connect({
          ...adminTls,
          host: '127.0.0.1',
          port: Number(port),
          ALPNProtocols: ['http/1.1'],
        });
        let text = '';
        const done = () => {
          socket.destroy();
          resolve(text);
        };
        socket.on('data', (chunk: Buffer) => {
          text += chunk.toString('latin1');
          if (complete(text)) done();
        });
        socket.on('error', done);
        socket.on('close', done);
        socket.on('secureConnect', () => socket.write(message));
        socket.setTimeout(5_000, done);
      });
    const raw = rawMessages(RAW_REQUESTS);
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        for (let message = raw.pop(); message !== undefined; message = raw.pop()) {
          const answer = await within(rawAnswer(message), '');
          sent++;
          const code = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0);
          if (code === 0) {
            resets++;
            note('raw: no answer', message.slice(0, 100));
            continue;
          }
          codes.set(code, (codes.get(code) ?? 0) + 1);
          const [head = '', body = ''] = answer.split('\r\n\r\n');
          const contentType = /content-type: ([^\r\n]+)/i.exec(head)?.[1] ?? '';
          note(problemWith('raw', { method: 'RAW' }, { code, contentType, body }), message.slice(0, 100));
        }
      }),
    );
    const seconds = (Date.now() - started) / 1000;

    // Requests smuggled behind upgrades by a caller with no rights at all: each connection gets exactly one
    // answer, mallory's own (an error), and is closed; nothing behind the upgrade is served.
    const namespace = `fuzz-${Date.now()}`;
    const controlPlane = clientsFor(env.controlPlane.kubeconfig);
    await controlPlane.core.createNamespace({ body: { metadata: { name: namespace } } });
    const mallory = await newServiceAccountToken(env.controlPlane.kubeconfig, namespace, 'mallory');
    const smuggledAnswers = new Map<string, number>();
    let smugglingConnectionsLeftOpen = 0;
    const smuggling = smugglingMessages(SMUGGLING_ATTEMPTS, mallory);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let message = smuggling.pop(); message !== undefined; message = smuggling.pop()) {
          const { answer: text, closed } = await answersOnOneConnection(router!.url, tls, message);
          const lines = text.match(/^HTTP\/1\.1 \d{3}/gm) ?? [];
          if (!closed) smugglingConnectionsLeftOpen++;
          // The first answer is the upgrade's own; anything after it was served behind it.
          for (const [index, line] of lines.entries()) {
            const key = `${index === 0 ? 'upgrade' : 'smuggled'} ${line.slice(9)}`;
            smuggledAnswers.set(key, (smuggledAnswers.get(key) ?? 0) + 1);
          }
        }
      }),
    );
    await controlPlane.core.deleteNamespace({ name: namespace }).catch(() => undefined);
    const answersBehindUpgrades = [...smuggledAnswers]
      .filter(([key]) => key.startsWith('smuggled'))
      .reduce((sum, [, count]) => sum + count, 0);
    const upgradesServed = [...smuggledAnswers]
      .filter(([key]) => /^upgrade [12]/.test(key))
      .reduce((sum, [, count]) => sum + count, 0);

    // Still alive and serving.
    expect(router.child.exitCode).toBeNull();
    const ready = await request(`http://127.0.0.1:${router.httpPort}/readyz`);
    expect(ready.statusCode).toBe(200);
    await ready.body.dump();
    const namespaces = await request(`${router.url}/api/v1/namespaces`, { dispatcher: dispatchers.admin });
    expect(namespaces.statusCode).toBe(200);
    await namespaces.body.dump();
    const rssAfter = rssKiB(router.child.pid!);
    const routerErrors = router.lines.filter((line) => Number(line.level) >= 50);
    // 5xx the router made itself (its access log names the route "error" or "unhandled"), apart from an
    // apiserver's own 5xx it passed on.
    const routerServerErrors = router.lines.filter(
      (line) =>
        line.msg === 'request' &&
        Number(line.code) >= 500 &&
        ['error', 'unhandled'].includes(String(line.route)),
    );
    const serverErrors = [...codes]
      .filter(([code]) => code >= 500)
      .reduce((sum, [, count]) => sum + count, 0);
    const notStatus = [...problems].filter(([problem]) => /^\w+: \d{3}, not/.test(problem));
    const count = (entries: [string, { count: number }][]) =>
      entries.reduce((sum, [, seen]) => sum + seen.count, 0);
    recordProof('router-fuzz', {
      proof: `${REQUESTS} malformed and hostile requests (seed ${SEED}) at the router in front of ${env.cells.length} real cells, ${CONCURRENCY} at a time, over HTTP/1.1, HTTP/2 and raw TLS`,
      goals: {
        crashes: '= 0',
        routerServerErrors: '= 0',
        serverErrors: '= 0',
        answersNotAStatus: '= 0',
        routerErrorLogLines: '= 0',
        resetsWithoutAnAnswer: '= 0',
        unanswered: '= 0',
        answersBehindUpgrades: '= 0',
        smugglingUpgradesServed: '= 0',
        smugglingConnectionsLeftOpen: '= 0',
        rssGrowthAfterWarmUp: '<= 1.2',
      },
      figures: {
        crashes: router.child.exitCode === null ? 0 : 1,
        serverErrors,
        routerServerErrors: routerServerErrors.length,
        answersNotAStatus: count(notStatus),
        resetsWithoutAnAnswer: resets,
        unanswered,
        routerErrorLogLines: routerErrors.length,
        requestsPerSecond: Math.round(REQUESTS / seconds),
        answersBehindUpgrades,
        smugglingUpgradesServed: upgradesServed,
        smugglingConnectionsLeftOpen,
        rssGrowthAfterWarmUp: Math.round((rssAfter / rssWarm) * 100) / 100,
      },
      measured: {
        requests: sent,
        seed: SEED,
        seconds: Math.round(seconds),
        notSentByTheClient: notSent,
        codes: Object.fromEntries([...codes].sort(([a], [b]) => a - b)),
        rssKiBBefore: rssBefore,
        rssKiBWarm: rssWarm,
        rssKiBAfter: rssAfter,
        smugglingAttempts: SMUGGLING_ATTEMPTS,
        smuggledAnswers: Object.fromEntries(smuggledAnswers),
        problems: Object.fromEntries(problems),
      },
    });
    expect(sent).toBe(REQUESTS);
    expect({ answersBehindUpgrades, upgradesServed, smugglingConnectionsLeftOpen }).toEqual({
      answersBehindUpgrades: 0,
      upgradesServed: 0,
      smugglingConnectionsLeftOpen: 0,
    });
    // Every sent request answered, every answer below 500 and a Status when it is an error: the problems
    // that are left are the requests the client libraries would not send.
    const wrong = [...problems].filter(([problem]) => !/not sent by the client/.test(problem));
    expect(wrong.map(([problem, seen]) => `${seen.count}× ${problem}: ${seen.example}`).slice(0, 5)).toEqual(
      [],
    );
    expect(routerServerErrors.slice(0, 3)).toEqual([]);
    expect(routerErrors.slice(0, 3)).toEqual([]);
  }, 900_000);

  it(`keeps its memory under a body flood (${BODY_FLOOD} × 3 MiB) and ${SLOW_WATCHERS} watches of one tenant that never read`, async () => {
    const flooded = await startRouter(env, {
      logFile: join(env.dir, 'router-flood.log'),
      keepLines: 1_000,
      args: [
        ...['--max-watch-bytes-held', String(WATCH_BYTES_HELD)],
        ...['--max-long-running-per-caller', String(LONG_RUNNING_PER_CALLER)],
      ],
    });
    const namespace = `flood-${Date.now().toString(36)}`;
    const admin = agent({ connect: adminTls, connections: 8 });
    const { port } = new URL(flooded.url);
    const sockets: ReturnType<typeof connect>[] = [];
    closers.push(() => sockets.forEach((socket) => socket.destroy()));
    const rss = () => rssKiB(flooded.child.pid!);
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, rss())), 200);
    try {
      // The tenant's namespace everywhere, a caller bound to nothing, and one that may watch ConfigMaps.
      for (const file of [env.controlPlane.kubeconfig, ...env.cells.map((cell) => cell.kubeconfig)])
        await clientsFor(file).core.createNamespace({ body: { metadata: { name: namespace } } });
      const nobody = await newServiceAccountToken(env.controlPlane.kubeconfig, namespace, 'nobody');
      const watcher = await newServiceAccountToken(env.controlPlane.kubeconfig, namespace, 'watcher');
      for (const file of [env.controlPlane.kubeconfig, ...env.cells.map((cell) => cell.kubeconfig)])
        await grantRole(
          file,
          namespace,
          {
            name: 'watch',
            rules: [{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch'] }],
          },
          'watcher',
        );
      await sleep(1_000);
      const before = rss();
      peak = before;
      const open = (head: string) =>
        new Promise<ReturnType<typeof connect>>((resolve, reject) => {
          const socket = connect({ host: '127.0.0.1', port: Number(port), ...tls }, () => {
            socket.write(head);
            resolve(socket);
          });
          socket.once('error', reject);
          sockets.push(socket);
        });

      // The body flood: each connection sends all of a 3 MiB ConfigMap create but its last byte, then waits.
      const size = 3 * 1024 * 1024;
      const answers: Promise<string>[] = [];
      const floods = await Promise.all(
        Array.from({ length: BODY_FLOOD }, async (_, i) => {
          const socket = await open(
            [
              `POST /api/v1/namespaces/${namespace}/configmaps HTTP/1.1`,
              'Host: router',
              `Authorization: Bearer ${nobody}`,
              'Content-Type: application/json',
              `Content-Length: ${size}`,
              '',
              '',
            ].join('\r\n'),
          );
          let answer = '';
          socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
          answers.push(new Promise((resolve) => socket.once('close', () => resolve(answer))));
          const body = Buffer.alloc(size - 1, i % 10);
          await new Promise<void>((resolve) => socket.write(body, () => resolve()));
          return socket;
        }),
      );
      await sleep(3_000);
      const afterBodies = rss();
      for (const socket of floods) socket.end('x');
      const codes = (await Promise.all(answers)).map((answer) => /^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);

      // The slow watchers: every watch opened, none read past its head (paused sockets).
      const watchCodes = await Promise.all(
        Array.from({ length: SLOW_WATCHERS }, async () => {
          const socket = await open(
            [
              `GET /api/v1/namespaces/${namespace}/configmaps?watch=1 HTTP/1.1`,
              'Host: router',
              `Authorization: Bearer ${watcher}`,
              '',
              '',
            ].join('\r\n'),
          );
          // Its head, or nothing if the router closes the connection first (then no code: a failure).
          const head = await new Promise<string>((resolve) => {
            socket.once('data', (chunk: Buffer) => resolve(chunk.toString('latin1')));
            socket.once('close', () => resolve(''));
          });
          socket.pause();
          return /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1];
        }),
      );
      // Events for every watch: 200 ConfigMaps of 16 KiB, as the admin through the router.
      const data = { blob: 'x'.repeat(16 * 1024) };
      for (let i = 0; i < 200; i++) {
        const created = await request(`${flooded.url}/api/v1/namespaces/${namespace}/configmaps`, {
          method: 'POST',
          dispatcher: admin,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `cm-${i}` }, data }),
        });
        await created.body.dump();
      }
      // Long enough for a full buffer to stall past its 10 s: every watch still open then is cut.
      await sleep(15_000);
      const afterWatches = rss();
      const growthMiB = Math.round((peak - before) / 1024);
      const bodiesGrowthMiB = Math.round((afterBodies - before) / 1024);
      recordProof('router-flood', {
        proof: `one tenant's ${BODY_FLOOD} connections each sending a 3 MiB create but its last byte as a caller with no rights, then ${SLOW_WATCHERS} of its watches that never read while 200 ConfigMaps of 16 KiB are written, at the router in front of ${env.cells.length} real cells (all watches may hold ${WATCH_BYTES_HELD / 1024 / 1024} MiB)`,
        goals: {
          routerRssGrowthAfterBodiesMiB: `<= ${BODY_FLOOD_RSS_GROWTH_MIB}`,
          routerRssGrowthMiB: `<= ${FLOOD_RSS_GROWTH_MIB}`,
          bodiesNotRefused: '= 0',
          watchesPastTheCallerLimitServed: '= 0',
        },
        figures: {
          routerRssGrowthAfterBodiesMiB: bodiesGrowthMiB,
          routerRssGrowthMiB: growthMiB,
          bodiesNotRefused: codes.filter((code) => code !== '403').length,
          watchesPastTheCallerLimitServed: Math.max(
            0,
            watchCodes.filter((code) => code === '200').length - LONG_RUNNING_PER_CALLER,
          ),
        },
        measured: {
          rssKiBBefore: before,
          rssKiBAfterBodies: afterBodies,
          rssKiBAfterWatches: afterWatches,
          rssKiBPeak: peak,
          bodyCodes: Object.fromEntries(
            [...new Set(codes)].map((code) => [String(code), codes.filter((one) => one === code).length]),
          ),
          watchCodes: Object.fromEntries(
            [...new Set(watchCodes)].map((code) => [
              String(code),
              watchCodes.filter((one) => one === code).length,
            ]),
          ),
        },
      });
      expect(codes.filter((code) => code !== '403')).toEqual([]);
      expect(bodiesGrowthMiB).toBeLessThanOrEqual(BODY_FLOOD_RSS_GROWTH_MIB);
      // The tenant's watches up to its limit are served; the others are told to come back (429), as
      // kube-apiserver's flow control tells them.
      expect(watchCodes.filter((code) => code === '200')).toHaveLength(
        Math.min(SLOW_WATCHERS, LONG_RUNNING_PER_CALLER),
      );
      expect(watchCodes.filter((code) => code !== '200')).toEqual(
        Array.from({ length: Math.max(0, SLOW_WATCHERS - LONG_RUNNING_PER_CALLER) }, () => '429'),
      );
      expect(growthMiB).toBeLessThanOrEqual(FLOOD_RSS_GROWTH_MIB);
      expect(flooded.child.exitCode).toBeNull();
    } finally {
      clearInterval(sampler);
      for (const socket of sockets) socket.destroy();
      await stopRouter(flooded);
      for (const file of [env.controlPlane.kubeconfig, ...env.cells.map((cell) => cell.kubeconfig)])
        await clientsFor(file)
          .core.deleteNamespace({ name: namespace })
          .catch(() => undefined);
    }
  }, 600_000);
});
