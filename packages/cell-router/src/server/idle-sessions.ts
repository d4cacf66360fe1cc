import type { Http2Server, Http2SecureServer, ServerHttp2Session } from 'node:http2';

/**
 * kube-apiserver's idle timeout for a connection with nothing open (its HTTP server's IdleTimeout, 90 s):
 * an HTTP/2 connection with no stream open this long is closed gracefully (GOAWAY), so a client cannot hold
 * connections, and the router the memory of each, for nothing. A watch is a stream: it keeps its
 * connection, however quiet.
 */
const HTTP2_IDLE_MS = 90_000;

/**
 * kube-apiserver's idle timeout for an HTTP/1.1 keep-alive connection too (the same IdleTimeout): Node's
 * default is 5 s, and clients of kube-apiserver (Go's transport keeps idle connections 90 s) reuse one
 * later than that; a request written as the router closes the connection is lost ("connection reset",
 * "other side closed"), and a PATCH or POST is not retried.
 */
export function keepHttp1ConnectionsAsKubeApiserver(server: Http2Server | Http2SecureServer): void {
  // The HTTP/1.1 fallback (allowHTTP1) reads it from the HTTP/2 server; its typings do not list it.
  (server as unknown as { keepAliveTimeout: number }).keepAliveTimeout = HTTP2_IDLE_MS;
}

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
