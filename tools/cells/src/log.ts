import { pino, type Logger } from 'pino';

export type { Logger };

/** JSON logs on stderr (stdout is left for a command's result); every line names what it is about. */
export function createLogger(options: { level?: string; destination?: number } = {}): Logger {
  return pino(
    { name: 'cellfed-cells', level: options.level ?? 'info', base: undefined },
    pino.destination({ fd: options.destination ?? 2, sync: true }),
  );
}
