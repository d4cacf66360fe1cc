import { request, type Agent } from 'undici';

import { progress, round } from './bench-env.ts';

/** An apiserver (or the router) and the TLS pool that reaches it. */
export interface Target {
  base: string;
  agent: Agent;
}

/** What one request answered: its status, its Retry-After in seconds (when it gave one) and its body. */
export interface Answer {
  status: number;
  retryAfterSeconds?: number;
  text: string;
}

/** One request; answers whatever status came (see {@link call} for one that throws). */
export async function send(
  target: Target,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<Answer> {
  const response = await request(`${target.base}${path}`, {
    method,
    dispatcher: target.agent,
    headers: { accept: 'application/json', ...(body ? { 'content-type': contentType } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.body.text();
  const retryAfter = Number(response.headers['retry-after']);
  return {
    status: response.statusCode,
    ...(Number.isFinite(retryAfter) && response.headers['retry-after'] !== undefined
      ? { retryAfterSeconds: retryAfter }
      : {}),
    text,
  };
}

/**
 * One request; answers the body text. A status of 300 or more throws, except 409 (already exists: a
 * benchmark that is run again finds its objects).
 */
export async function call(
  target: Target,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<string> {
  const { status, text } = await send(target, method, path, body, contentType);
  if (status >= 300 && status !== 409) throw new Error(`${method} ${path}: ${status} ${text.slice(0, 200)}`);
  return text;
}

/** Runs `action(i)` for i in 0…count−1, `concurrency` at a time, with progress every 10k. */
export async function forEachIndex(
  what: string,
  count: number,
  concurrency: number,
  action: (i: number) => Promise<unknown>,
): Promise<void> {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let i = next++; i < count; i = next++) {
        await action(i);
        if ((i + 1) % 10_000 === 0)
          progress(`${what}: ${i + 1}/${count} (${round((performance.now() - started) / 1000, 1)} s)`);
      }
    }),
  );
}
