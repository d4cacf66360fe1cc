import { createServer } from 'node:http';

import { keepAliveUploads } from '../testing/keep-alive-uploads.ts';
import { readBody } from './forward.ts';

describe('readBody', () => {
  it('refuses a body over the limit without resetting the connection, which carries the next request', async () => {
    const uploads = await keepAliveUploads(
      createServer(async (request, response) => {
        const body = await readBody(request, 1024 * 1024);
        if (body === 'too-large') response.writeHead(413).end();
        else response.writeHead(200).end(`${body.length}`);
      }),
    );
    try {
      expect(await uploads.upload(4 * 1024 * 1024, 'POST')).toBe('413 ');
      expect(await uploads.upload(10, 'POST')).toBe('200 10');
      expect(uploads.connections()).toBe(1);
    } finally {
      await uploads.close();
    }
  });
});
