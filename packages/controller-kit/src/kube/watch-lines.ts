import { ControllerKitError, ControllerKitErrorCode } from '../errors.ts';

/** One event of a watch stream. For ERROR, `object` is a `Status`. */
export interface WatchEvent<T = unknown> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

const TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR']);

/**
 * Splits a watch body (newline-delimited JSON, in chunks cut anywhere) into events. A line that is not a
 * watch event ends the stream with an error: skipping it would silently lose an update.
 */
export async function* watchEvents(chunks: AsyncIterable<Buffer | string>): AsyncGenerator<WatchEvent> {
  // A chunk may end inside a multi-byte character; the streaming decoder keeps the partial bytes.
  const decoder = new TextDecoder();
  let pending = '';
  for await (const chunk of chunks) {
    pending += typeof chunk === 'string' ? chunk : decoder.decode(chunk, { stream: true });
    let newline = pending.indexOf('\n');
    while (newline >= 0) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (line.trim() !== '') yield decode(line);
      newline = pending.indexOf('\n');
    }
  }
  pending += decoder.decode();
  if (pending.trim() !== '') yield decode(pending);
}

function decode(line: string): WatchEvent {
  let event: unknown;
  try {
    event = JSON.parse(line);
  } catch (error) {
    throw new ControllerKitError(
      ControllerKitErrorCode.WatchDecode,
      `watch sent a line that is not JSON: ${line.slice(0, 200)}`,
      {
        cause: error,
      },
    );
  }
  const candidate = event as Partial<WatchEvent>;
  if (
    typeof candidate?.type !== 'string' ||
    !TYPES.has(candidate.type) ||
    typeof candidate.object !== 'object'
  ) {
    throw new ControllerKitError(
      ControllerKitErrorCode.WatchDecode,
      `watch sent something that is not an event: ${line.slice(0, 200)}`,
    );
  }
  return candidate as WatchEvent;
}
