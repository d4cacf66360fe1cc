import { connect } from 'node:tls';

/**
 * Everything a TLS server answers on one connection to `bytes`, written at once, until it closes the
 * connection (or `withinMs` pass): the raw bytes read as latin1, and whether the server closed it. What a
 * smuggling check reads: every answer on the connection, not only the first.
 */
export function answersOnOneConnection(
  url: string,
  tls: { ca: Buffer | string; servername?: string },
  bytes: string,
  withinMs = 10_000,
): Promise<{ answer: string; closed: boolean }> {
  return new Promise((resolve) => {
    const socket = connect({
      ...tls,
      host: '127.0.0.1',
      port: Number(new URL(url).port),
      servername: tls.servername ?? 'localhost',
      ALPNProtocols: ['http/1.1'],
    });
    let answer = '';
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ answer, closed: false });
    }, withinMs);
    socket.once('secureConnect', () => socket.write(bytes));
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve({ answer, closed: true });
    });
  });
}
