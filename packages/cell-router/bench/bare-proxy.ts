// The least a Node.js proxy in front of a cell can do, for the router benchmark's second baseline: TLS in,
// undici (HTTP/1.1 keep-alive) out as the router's cell identity, impersonating the control plane's admin as the
// router does for it (user, its two groups, the credential-id extra), the answer piped back. No
// authentication, routing, logging or metrics. Prints its port on stdout.
//   node bare-proxy.ts <cell url> <cell pki dir> <serving pki dir>
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';

import { Agent, request } from 'undici';

const [cellUrl, cellPki, servingPki] = process.argv.slice(2) as [string, string, string];
const upstream = new Agent({
  connect: {
    ca: readFileSync(join(cellPki, 'ca.crt')),
    cert: readFileSync(join(cellPki, 'cellfed-router.crt')),
    key: readFileSync(join(cellPki, 'cellfed-router.key')),
  },
  allowH2: false,
});
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding']);
// What kube-apiserver records of the caller's client certificate, as the router passes it on.
const credentialId = `X509SHA256=${new X509Certificate(readFileSync(join(servingPki, 'admin.crt'))).fingerprint256.replaceAll(':', '').toLowerCase()}`;
const server = createServer(
  {
    cert: readFileSync(join(servingPki, 'apiserver.crt')),
    key: readFileSync(join(servingPki, 'apiserver.key')),
  },
  async (req, res) => {
    const answer = await request(cellUrl + req.url, {
      method: req.method as 'GET',
      dispatcher: upstream,
      headers: {
        ...(req.headers['content-type'] ? { 'content-type': req.headers['content-type'] } : {}),
        accept: req.headers.accept ?? 'application/json',
        'impersonate-user': 'admin',
        'impersonate-group': ['system:masters', 'system:authenticated'],
        'impersonate-extra-authentication.kubernetes.io%2fcredential-id': credentialId,
      },
      body: req.method === 'GET' ? null : req,
    });
    const headers: Record<string, string | string[]> = {};
    for (const [name, value] of Object.entries(answer.headers))
      if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
    res.writeHead(answer.statusCode, headers);
    await pipeline(answer.body, res);
  },
);
server.listen(0, '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => process.exit(0));
