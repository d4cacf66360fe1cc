import { pino, type Logger } from 'pino';

/**
 * The process logger: pino JSON on stdout with the component's name. Children add cell, key, resource and
 * reconcileID, so every line says what it is about.
 */
export function createLogger(options: { name: string; level?: string }): Logger {
  return pino({ name: options.name, level: options.level ?? 'info', base: undefined });
}
