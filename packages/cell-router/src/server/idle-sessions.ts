import type { Http2Server, Http2SecureServer, ServerHttp2Session } from 'node:http2';

/**
 * kube-apiserver's idle timeout for a connection with nothing open (its HTTP server's IdleTimeout, 90 s):
 * an HTTP/2 connection with no stream open this long is closed gracefully (GOAWAY), so a client cannot hold
 * connections, and the router the memory of each, for nothing. A watch is a stream: it keeps its
 * connection, however quiet.
 */
const HTTP2_IDLE_MS = 90_000;

/** Closes each HTTP/2 session of `server` once it has had no open stream for `idleMs`. */
export function closeIdleSessions(server: Http2Server | Http2SecureServer, idleMs = HTTP2_IDLE_MS): void {
  server.on('session', (session: ServerHttp2Session) => {
    let open = 0;
    let timer: NodeJS.Timeout | undefined;
    const arm = () => {
      timer = setTimeout(() => session.close(), idleMs);
      timer.unref();
    };
    arm();
    session.on('stream', (stream) => {
      clearTimeout(timer);
      open++;
      stream.once('close', () => {
        open--;
        if (open === 0 && !session.closed) arm();
      });
    });
    session.once('close', () => clearTimeout(timer));
  });
}
