/** What the bench sections share: percentiles, /proc readings, an SSE reader, a delaying proxy, options. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** `npm run bench -- --quick`, or BENCH_QUICK=1: shorter runs, for a smoke test of the harness. */
export const QUICK = process.argv.includes('--quick') || process.env.BENCH_QUICK === '1';
/** Seconds for a timed phase: `full` normally, `quick` in quick mode. */
export const secs = (full: number, quick: number) => (QUICK ? quick : full);

export function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : undefined;
}

/** Nearest-rank percentile, p in 0..1. */
export function pct(xs: number[], p: number): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(p * s.length) - 1))];
}
export const mean = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
export const fmt = (n: number, d = 1) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: d, maximumFractionDigits: d }) : String(n);
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

const CLK_TCK = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
/** utime + stime of a process, in ms (from /proc/<pid>/stat). */
export function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // fields from 3 (state) on
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLK_TCK; // utime (14), stime (15)
}
/** A memory field of a process's /proc/<pid>/status (VmRSS, VmHWM: the peak RSS, …), in MB. */
export function procMemoryMb(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return NaN; // the process is gone: the run says so where it reads the figure
  }
  const m = new RegExp(`${field}:\\s+(\\d+)`).exec(status);
  return m ? Number(m[1]) / 1024 : NaN;
}
/** VmRSS of a process, in MB. */
export const rssMb = (pid: number): number => procMemoryMb(pid, 'VmRSS');

export interface SseFrame {
  id?: number;
  event: string;
  data: string;
}

/**
 * A conversation's SSE stream read with fetch; calls `onFrame` for every frame. `close()` ends it.
 * Lighter than the `eventsource` client, so a bench can hold hundreds.
 */
export async function openSse(
  url: string,
  headers: Record<string, string>,
  onFrame: (f: SseFrame) => void,
): Promise<{ close: () => void; done: Promise<void> }> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: { ...headers, accept: 'text/event-stream' }, signal: ac.signal });
  if (!res.ok || !res.body) throw new Error(`SSE ${url}: ${res.status}`);
  const reader = res.body.getReader();
  const dec = new TextDecoder();
  const done = (async () => {
    let buf = '';
    try {
      for (;;) {
        const { value, done: end } = await reader.read();
        if (end) break;
        buf += dec.decode(value, { stream: true });
        let i: number;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const f: SseFrame = { event: 'message', data: '' };
          for (const line of block.split('\n')) {
            if (line.startsWith('id: ')) f.id = Number(line.slice(4));
            else if (line.startsWith('event: ')) f.event = line.slice(7);
            else if (line.startsWith('data: ')) f.data += line.slice(6);
          }
          if (f.data || f.event !== 'message') onFrame(f);
        }
      }
    } catch {
      // aborted by close()
    }
  })();
  return { close: () => ac.abort(), done };
}

/**
 * Watches one conversation's stream for turn endings: `waitReply(turnId)` resolves at the
 * `AssistantReplied` (or any turn ending) of that turn, with the time it was seen and its version.
 */
export async function turnWatcher(base: string, auth: Record<string, string>, conversationId: string, after = 0) {
  type Ending = { at: number; type: string; version?: number };
  const seen = new Map<string, Ending>();
  const waiting = new Map<string, (v: Ending) => void>();
  const ENDINGS = ['AssistantReplied', 'TurnFailed', 'TurnCancelled'];
  const sse = await openSse(`${base}/v1/conversations/${conversationId}/stream?after=${after}`, auth, (f) => {
    if (!ENDINGS.includes(f.event)) return;
    const turnId = /"turnId":"([^"]+)"/.exec(f.data)?.[1];
    if (!turnId) return;
    const v: Ending = { at: performance.now(), type: f.event, version: f.id };
    seen.set(turnId, v);
    waiting.get(turnId)?.(v);
    waiting.delete(turnId);
  });
  return {
    close: sse.close,
    waitReply(turnId: string, timeoutMs = 120_000): Promise<Ending> {
      const had = seen.get(turnId);
      if (had) return Promise.resolve(had);
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no reply to turn ${turnId} in ${timeoutMs} ms`)), timeoutMs);
        waiting.set(turnId, (v) => {
          clearTimeout(t);
          resolve(v);
        });
      });
    },
  };
}

export interface ProxyRecord {
  at: number;
  body: string;
  done: boolean;
  doneAt?: number;
  aborted: boolean;
}

/**
 * An HTTP proxy in front of the fake Messages API that holds each request `delayMs` before
 * forwarding it: a model that takes that long to answer (a function: the hold of the n-th
 * request, from 0). Records every request at arrival.
 */
export async function delayingProxy(
  target: string,
  delayMs: number | ((n: number) => number),
): Promise<{ url: string; records: ProxyRecord[]; close: () => Promise<void> }> {
  const records: ProxyRecord[] = [];
  const t = new URL(target);
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const rec: ProxyRecord = { at: Date.now(), body: body.toString(), done: false, aborted: false };
      const hold = typeof delayMs === 'number' ? delayMs : delayMs(records.length);
      records.push(rec);
      res.on('close', () => {
        if (!res.writableFinished) rec.aborted = true;
      });
      res.on('finish', () => {
        rec.done = true;
        rec.doneAt = Date.now();
      });
      setTimeout(() => {
        if (res.destroyed) return;
        const up = request(
          { host: t.hostname, port: t.port, path: req.url, method: req.method, headers: req.headers },
          (upRes) => {
            res.writeHead(upRes.statusCode ?? 502, upRes.headers);
            upRes.pipe(res);
          },
        );
        up.on('error', () => res.destroy());
        res.on('close', () => up.destroy());
        up.end(body);
      }, hold);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    records,
    close: () =>
      new Promise<void>((r) => {
        server.close(() => r());
        server.closeAllConnections();
      }),
  };
}

/** Stops for what is running now (stacks of processes), run by bench/run.ts on Ctrl-C or SIGTERM. */
export const onAbort = new Set<() => Promise<unknown>>();

/**
 * Node options for the service processes a bench starts, from BENCH_NODE_ARGS (space-separated),
 * e.g. "--cpu-prof --cpu-prof-dir=bench/results/prof": a CPU profile of each process under the load.
 */
export function benchNodeArgs(): string[] | undefined {
  return process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean);
}
