import { pino, type Logger } from 'pino';

/** A pino logger that keeps its lines in memory, parsed, for assertions. */
export function memoryLogger(level = 'debug'): { logger: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level, base: undefined }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}
