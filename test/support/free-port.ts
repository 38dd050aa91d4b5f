import { readFileSync } from 'node:fs';
import net from 'node:net';

// A port the kernel hands out for listen(0) is in its ephemeral range, which it also hands to
// outgoing connections (to Postgres, Redis, the fakes) of every process on the machine: in the
// moment between choosing it and a child process binding it, any such connection could take it
// (CI once saw an API exit with EADDRINUSE). Ports are therefore chosen below that range, from a
// slice of their own for each Jest worker, and checked bindable.
const SLICE = 1_000;
const LOWEST = 10_000;

function ephemeralLow(): number {
  try {
    return Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]) || 32_768;
  } catch {
    return 32_768;
  }
}

const slices = Math.max(1, Math.floor((ephemeralLow() - LOWEST) / SLICE));
const sliceStart = LOWEST + ((Number(process.env.JEST_WORKER_ID ?? 1) - 1) % slices) * SLICE;
// each test file gets fresh module state, so start at a random place in the slice rather than
// at its head, where the previous file's processes may still be letting go
let next = Math.floor(Math.random() * SLICE);

function bindable(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, () => server.close(() => resolve(true)));
  });
}

/** A port free now that no other Jest worker will choose and no outgoing connection can take. */
export async function freePort(): Promise<number> {
  for (let tried = 0; tried < SLICE; tried++) {
    const port = sliceStart + (next++ % SLICE);
    if (await bindable(port)) return port;
  }
  throw new Error(`no free port in ${sliceStart}–${sliceStart + SLICE - 1}`);
}
