import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Http2ServerRequest, Http2ServerResponse } from 'node:http2';

/** A client's request over HTTP/1.1 or HTTP/2: the front offers both (ALPN), as kube-apiserver does. */
export type ClientRequest = IncomingMessage | Http2ServerRequest;
export type ClientResponse = ServerResponse | Http2ServerResponse;
