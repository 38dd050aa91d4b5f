import { readFileSync } from 'node:fs';
import net from 'node:net';

const ephemeralLow = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

async function freePortAs(jestWorker: string): Promise<typeof import('./free-port').freePort> {
  const was = process.env.JEST_WORKER_ID;
  process.env.JEST_WORKER_ID = jestWorker;
  try {
    let loaded!: typeof import('./free-port');
    await jest.isolateModulesAsync(async () => {
      loaded = await import('./free-port');
    });
    return loaded.freePort;
  } finally {
    process.env.JEST_WORKER_ID = was;
  }
}

// slices of Jest workers that never run (jest.config.js: maxWorkers 2), so that these probes cannot
// take, for a moment, a port a running suite has just been given
describe('freePort', () => {
  it('chooses below the kernel’s ephemeral range, so no outgoing connection can take the port', async () => {
    const freePort = await freePortAs('7');
    for (let i = 0; i < 20; i++) expect(await freePort()).toBeLessThan(ephemeralLow);
  });

  it('gives one file distinct ports, and two Jest workers ports from slices that do not meet', async () => {
    const first = await freePortAs('7');
    const second = await freePortAs('8');
    const ofFirst = new Set<number>();
    const ofSecond = new Set<number>();
    for (let i = 0; i < 50; i++) {
      ofFirst.add(await first());
      ofSecond.add(await second());
    }
    expect(ofFirst.size).toBe(50);
    expect(ofSecond.size).toBe(50);
    expect(Math.max(...ofFirst) < Math.min(...ofSecond) || Math.max(...ofSecond) < Math.min(...ofFirst)).toBe(true);
  });

  it('passes over a port something already listens on', async () => {
    const freePort = await freePortAs('9');
    const port = await freePort();
    const holder = net.createServer();
    await new Promise<void>((r) => holder.listen(port, r));
    try {
      // a fresh copy starts at a random place; ask until it has gone once round its slice
      const again = await freePortAs('9');
      for (let i = 0; i < 1_000; i++) expect(await again()).not.toBe(port);
    } finally {
      holder.close();
    }
  });
});
