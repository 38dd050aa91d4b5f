import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';

/** What a scrape answers: the exposition text and its content type. */
export interface MetricsExposition {
  body: string;
  contentType: string;
}

/** An open metrics port: where it listens, and how to close it (its keep-alive scrapers too). */
export interface MetricsEndpoint {
  port: number;
  close(): Promise<void>;
}

/**
 * GET /metrics on its own port: a bare node HTTP server beside a process's public one (or, for a
 * worker, its only port), so metrics stay on the network Prometheus scrapes from. Anything else
 * there is a 404.
 */
export async function openMetricsEndpoint(
  port: number,
  render: () => Promise<MetricsExposition>,
  /** the address to listen on (HOST) */
  host: string,
): Promise<MetricsEndpoint> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || req.url?.split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: GET /metrics\n');
      return;
    }
    render().then(
      ({ body, contentType }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (e: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${e.message}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: async () => {
      server.closeAllConnections(); // a scraper's keep-alive connection would hold close() open
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
