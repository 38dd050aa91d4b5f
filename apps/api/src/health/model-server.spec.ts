import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { probeModelServer } from './model-server';

describe(probeModelServer.name, () => {
  const listen = (server: Server) =>
    new Promise<string>((resolve) =>
      server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`)),
    );
  const close = (server: Server) => new Promise((resolve) => server.close(resolve));

  it('is ok when the server answers, whatever it answers, and sends the key', async () => {
    let seen: { url?: string; authorization?: string } = {};
    const server = createServer((req, res) => {
      seen = { url: req.url, authorization: req.headers.authorization };
      res.writeHead(401).end();
    });
    const base = await listen(server);
    try {
      expect(await probeModelServer(base, 'sk-local')).toBe('ok');
      expect(seen).toEqual({ url: '/v1/models', authorization: 'Bearer sk-local' });
    } finally {
      await close(server);
    }
  });

  it('is down when nothing listens, or nothing answers in time', async () => {
    const gone = createServer();
    const base = await listen(gone);
    await close(gone);
    expect(await probeModelServer(base, undefined)).toBe('down');

    const silent = createServer(() => undefined);
    const slow = await listen(silent);
    try {
      expect(await probeModelServer(slow, undefined, 200)).toBe('down');
    } finally {
      silent.closeAllConnections();
      await close(silent);
    }
  });
});
