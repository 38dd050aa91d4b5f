import net from 'node:net';

/**
 * A TCP proxy on loopback that can cut every open connection, as a flaky mobile network does,
 * so a client's own reconnect logic is what gets tested.
 */
export async function startFlakyProxy(targetPort: number) {
  const sockets = new Set<net.Socket>();
  let cuts = 0;
  const server = net.createServer((client) => {
    const upstream = net.connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  return {
    base: `http://127.0.0.1:${port}`,
    get cuts() {
      return cuts;
    },
    cutAll() {
      if (sockets.size) cuts++;
      for (const s of sockets) s.destroy();
      sockets.clear();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
