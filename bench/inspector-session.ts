/**
 * A Chrome DevTools Protocol session with a service process started with `--inspect=127.0.0.1:0`,
 * over Node's global WebSocket (no dependency): enough to drive the profiler from the bench.
 */
import type { Proc } from '../test/support/stack';
import { waitFor } from '../test/support/wait-for';

export interface InspectorSession {
  send<T = unknown>(method: string, params?: object): Promise<T>;
  close(): void;
}

/** The process's inspector URL: the port it printed on start, then its target from /json/list. */
export async function inspectorUrlOf(proc: Proc, timeoutMs = 30_000): Promise<string> {
  const port = await waitFor(
    `${proc.name}'s "Debugger listening on ws://…" (started with --inspect)`,
    () => {
      if (proc.child.exitCode !== null) throw new Error(`${proc.name} exited:\n${proc.output()}`);
      return /Debugger listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(proc.output())?.[1];
    },
    timeoutMs,
    50,
  );
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json/list`)).json()) as Array<{
    webSocketDebuggerUrl?: string;
  }>;
  const url = targets.find((t) => t.webSocketDebuggerUrl)?.webSocketDebuggerUrl;
  if (!url) throw new Error(`${proc.name}: no debugger target at http://127.0.0.1:${port}/json/list`);
  return url;
}

export async function connectInspector(url: string, timeoutMs = 10_000): Promise<InspectorSession> {
  const ws = new WebSocket(url);
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let next = 1;
  const failAll = (why: string) => {
    for (const p of pending.values()) p.reject(new Error(`inspector ${url}: ${why}`));
    pending.clear();
  };
  ws.addEventListener('message', (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const p = msg.id === undefined ? undefined : pending.get(msg.id);
    if (!p) return; // an event (none is enabled that the bench reads)
    pending.delete(msg.id!);
    if (msg.error) p.reject(new Error(`inspector: ${msg.error.message}`));
    else p.resolve(msg.result);
  });
  ws.addEventListener('close', () => failAll('connection closed'));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`inspector ${url}: no connection in ${timeoutMs} ms`)), timeoutMs);
    ws.addEventListener('open', () => (clearTimeout(timer), resolve()), { once: true });
    ws.addEventListener('error', () => (clearTimeout(timer), reject(new Error(`inspector ${url}: cannot connect`))), {
      once: true,
    });
  });
  return {
    send<T>(method: string, params?: object): Promise<T> {
      const id = next++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
        ws.send(JSON.stringify({ id, method, params }));
      });
    },
    close: () => ws.close(),
  };
}
