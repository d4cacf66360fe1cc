import { pino, type Logger } from 'pino';

/**
 * The process logger: pino JSON on stdout with the component's name. Children add cell, key, resource and
 * reconcileID, so every line says what it is about.
 */
export function createLogger(options: { name: string; level?: string }): Logger {
  // Asynchronous writes: under load (the router's access log) lines written while one write is in flight
  // go out together instead of one blocking write each; nothing waits for a buffer to fill.
  return pino(
    { name: options.name, level: options.level ?? 'info', base: undefined },
    pino.destination({ dest: 1, sync: false }),
  );
}
