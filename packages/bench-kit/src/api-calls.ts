import { request, type Agent } from 'undici';

import { progress, round } from './bench-env.ts';

/** An apiserver (or the router) and the TLS pool that reaches it. */
export interface Target {
  base: string;
  agent: Agent;
}

/**
 * One request; answers the body text. A status of 300 or more throws, except 409 (already exists: a
 * benchmark that is run again finds its objects).
 */
export async function call(
  target: Target,
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE',
  path: string,
  body?: unknown,
  contentType = 'application/json',
): Promise<string> {
  const response = await request(`${target.base}${path}`, {
    method,
    dispatcher: target.agent,
    headers: { accept: 'application/json', ...(body ? { 'content-type': contentType } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.body.text();
  if (response.statusCode >= 300 && response.statusCode !== 409) {
    throw new Error(`${method} ${path}: ${response.statusCode} ${text.slice(0, 200)}`);
  }
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
