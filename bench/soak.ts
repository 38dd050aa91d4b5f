/**
 * Figure 11, the soak (`npm run bench:soak -- --minutes 60`; 2 minutes inside `npm run bench`):
 * 10 turns/s offered open-loop (on a schedule, whatever the replies) over 40 conversations with a
 * book, each turn a search then an answer from the fake Messages API held 300 ms a call, 1 API and
 * 2 workers; 100 SSE clients connect and disconnect over time, each checking it gets every event
 * once, in order, by version. Per minute: p50/p99 POST → AssistantReplied, answered/s, RSS of
 * every process. At the end: every turn ended exactly once, 5xx count, SSE lost/repeated.
 * `--heap-snapshots [5,30]` has the workers write heap snapshots at those minutes (bench/results/heap/).
 * The processes run with jemalloc preloaded, as the Docker image runs them; `--allocator glibc`
 * runs them on the C library's malloc, whose main arena keeps what a worker frees (RSS grows).
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { projectRoot } from '../libs/platform/src/project-root';
import { newBook } from '../test/support/factories/books';
import { FakeAnthropic } from '../test/support/fake-anthropic/fake-anthropic.server';
import { fakeAnthropicEnv } from '../test/support/stack';
import type { MemorySample } from './memory-probe';
import { add } from './report';
import { benchClient, newConversation, withStack } from './service';
import { delayingProxy, fmt, openSse, pct, rssMb, sleep, turnWatcher } from './util';

export interface SoakOptions {
  minutes: number;
  /** the processes' malloc: jemalloc (preloaded, where installed) or the C library's own */
  allocator?: 'jemalloc' | 'glibc';
  /** minutes at which each worker writes a heap snapshot */
  heapSnapshotsAt?: number[];
  rate?: number;
  conversations?: number;
  sseClients?: number;
}

/** Where Debian's libjemalloc2 puts it (Redis depends on it, so it is there wherever Redis is). */
export const JEMALLOC = '/usr/lib/x86_64-linux-gnu/libjemalloc.so.2';

/** The environment that gives the service's processes this allocator; glibc when jemalloc is absent. */
function allocatorEnv(allocator: 'jemalloc' | 'glibc'): Record<string, string> {
  if (allocator === 'jemalloc' && existsSync(JEMALLOC)) return { LD_PRELOAD: JEMALLOC };
  if (allocator === 'jemalloc') console.log(`  ${JEMALLOC} not found: the processes use glibc's malloc`);
  return {};
}

let memoryProbeDir = '';

/**
 * What the memory probe (bench/memory-probe.ts) saw of a process at `from` and at `to`: the JS
 * heap in use and reserved, memory outside it (Buffers), and the rest of RSS (the allocator's
 * and native code's), so a growing RSS says where it grows.
 */
function memoryBetween(pid: number, from: number, to: number): string | undefined {
  let samples: MemorySample[];
  try {
    samples = readFileSync(path.join(memoryProbeDir, `memory.${pid}.jsonl`), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return undefined;
  }
  const a = samples.find((x) => x.at >= from);
  const b = [...samples].reverse().find((x) => x.at <= to);
  if (!a || !b) return undefined;
  const mb = (n: number) => fmt(n / 2 ** 20, 0);
  const rest = (x: MemorySample) => x.rss - x.heapTotal - x.external;
  const pair = (f: (x: MemorySample) => number) => `${mb(f(a))} → ${mb(f(b))}`;
  return [
    `heap used ${pair((x) => x.heapUsed)}`,
    `heap reserved ${pair((x) => x.heapTotal)}`,
    `external ${pair((x) => x.external)} (ArrayBuffers ${pair((x) => x.arrayBuffers)})`,
    `rest of RSS ${pair(rest)}`,
  ].join('; ');
}

export async function soakBench(o: SoakOptions): Promise<void> {
  const rate = o.rate ?? 10;
  const nConv = o.conversations ?? 40;
  const nSse = o.sseClients ?? 100;
  const durationMs = o.minutes * 60_000;
  const heapDir = path.join(projectRoot(__dirname), 'bench/results/heap');
  const probeDir = path.join(projectRoot(__dirname), 'bench/results/memory');
  rmSync(probeDir, { recursive: true, force: true });
  mkdirSync(probeDir, { recursive: true });
  memoryProbeDir = probeDir;
  if (o.heapSnapshotsAt?.length) mkdirSync(heapDir, { recursive: true });
  const allocator = allocatorEnv(o.allocator ?? 'jemalloc');
  const allocatorName = allocator.LD_PRELOAD ? 'jemalloc' : "glibc's malloc";
  // the model's stand-in shares this machine's two cores: spare it the prompt-cache simulation,
  // which hashes every block of two ~240 KB requests a turn once conversations fill the budget
  const fake = await FakeAnthropic.start({ simulatePromptCache: false });
  const proxy = await delayingProxy(fake.url, 300);
  const resetTimer = setInterval(() => {
    fake.reset();
    proxy.records.length = 0;
  }, 5_000);
  try {
    await withStack(
      {
        apis: 1,
        workers: 2,
        env: { ...fakeAnthropicEnv(proxy.url), ...allocator, MEMORY_PROBE_FILE: path.join(probeDir, 'memory') },
        nodeArgs: [
          '-r',
          path.join(projectRoot(__dirname), 'dist/bench/memory-probe.js'),
          ...(o.heapSnapshotsAt?.length ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${heapDir}`] : []),
        ],
      },
      async (stack) => {
        const alice = benchClient(stack);
        const { id: bookId } = await newBook(alice);
        const convs = await Promise.all(Array.from({ length: nConv }, () => newConversation(alice, bookId)));
        const watchers = await Promise.all(convs.map((id) => turnWatcher(stack.base, alice.auth, id)));
        const procs = [
          { name: 'api', pid: stack.apis[0].child.pid! },
          ...stack.workers.map((w) => ({ name: w.name, pid: w.child.pid! })),
        ];
        const posted: Array<{ conv: number; turnId: string; at: number; ms?: number; endedAt?: number }> = [];
        let fiveXx = 0;
        let otherFail = 0;
        const statuses: Record<string, number> = {};
        const rss: Array<{ at: number; mb: Record<string, number> }> = [];
        const sseStats = { sessions: 0, frames: 0, lost: 0, repeated: 0 };
        const t0 = performance.now();
        const startedAt = Date.now();
        const until = t0 + durationMs;

        // SSE clients coming and going: each session on a random conversation for 3–15 s
        const sseLoops = Array.from({ length: nSse }, async (_, k) => {
          await sleep((k * 3_000) / nSse);
          while (performance.now() < until - 3_000) {
            const c = Math.floor(Math.random() * nConv);
            const v = (await alice.req('GET', `/v1/conversations/${convs[c]}`)).body?.version as number;
            let last = v;
            const s = await openSse(`${stack.base}/v1/conversations/${convs[c]}/stream?after=${v}`, alice.auth, (f) => {
              if (f.id === undefined || Number.isNaN(f.id)) return;
              sseStats.frames++;
              if (f.id <= last) sseStats.repeated++;
              else if (f.id > last + 1) sseStats.lost += f.id - last - 1;
              last = Math.max(last, f.id);
            }).catch(() => undefined);
            if (!s) continue;
            sseStats.sessions++;
            await sleep(3_000 + Math.random() * 12_000);
            // before leaving, make sure the stream is caught up: whatever it has not seen by then counts as lost
            const now = (await alice.req('GET', `/v1/conversations/${convs[c]}`)).body?.version as number;
            for (let w = 0; w < 50 && last < now; w++) await sleep(100);
            if (last < now) sseStats.lost += now - last;
            s.close();
          }
        });

        const sample = () => {
          const mb: Record<string, number> = {};
          for (const p of procs) mb[p.name] = rssMb(p.pid);
          rss.push({ at: performance.now() - t0, mb });
        };
        sample();
        const sampler = setInterval(sample, 10_000);
        const snaps: NodeJS.Timeout[] = [];
        for (const min of o.heapSnapshotsAt ?? [])
          snaps.push(setTimeout(() => stack.workers.forEach((w) => w.child.kill('SIGUSR2')), min * 60_000));
        // a process that leaves mid-run is the finding: say which, how and what it said last
        for (const p of [...stack.apis, ...stack.workers])
          p.child.once('exit', (code, signal) => {
            if (performance.now() < until)
              console.error(
                `  ${p.name} exited mid-run (code ${code}, signal ${signal}); its last output:\n${p.output().slice(-3000)}`,
              );
          });

        // open loop: one post every 1/rate s, round robin over the conversations
        const waits: Promise<void>[] = [];
        for (let i = 0; ; i++) {
          const at = t0 + (i * 1000) / rate;
          if (at >= until) break;
          const wait = at - performance.now();
          if (wait > 0) await sleep(wait);
          const conv = i % nConv;
          waits.push(
            (async () => {
              const s = performance.now();
              const r = await alice
                .req('POST', `/v1/conversations/${convs[conv]}/messages`, { content: `soak question ${i}` })
                .catch(() => ({ status: 0, body: undefined }));
              const code = r.status === 202 ? '' : ` ${(r.body as { code?: string } | undefined)?.code ?? ''}`;
              statuses[`${r.status}${code}`.trim()] = (statuses[`${r.status}${code}`.trim()] ?? 0) + 1;
              if (r.status >= 500) fiveXx++;
              if (r.status !== 202) {
                if (r.status < 500) otherFail++;
                return;
              }
              const rec = { conv, turnId: r.body.turnId as string, at: s - t0 } as (typeof posted)[number];
              posted.push(rec);
              const end = await watchers[conv].waitReply(rec.turnId, 300_000).catch(() => undefined);
              if (end) {
                rec.ms = end.at - s;
                rec.endedAt = end.at - t0;
              }
            })(),
          );
        }
        await Promise.all(waits);
        await Promise.all(sseLoops);
        clearInterval(sampler);
        snaps.forEach(clearTimeout);
        watchers.forEach((w) => w.close());

        // every turn ended exactly once, counted in the events
        let endedOnce = 0;
        let notOnce = 0;
        // when each conversation's history was first cut (HistorySummarized / HistoryTrimmed): from
        // then on its window is at its bound, so the memory a worker keeps for it has stopped growing
        const firstCutMs = new Map<number, number>();
        const byConv = new Map<number, string[]>();
        for (const p of posted) byConv.set(p.conv, [...(byConv.get(p.conv) ?? []), p.turnId]);
        for (const [conv, turnIds] of byConv) {
          const items: any[] = [];
          for (let after = 0; ;) {
            const page = (await alice.req('GET', `/v1/conversations/${convs[conv]}/events?after=${after}&limit=1000`))
              .body;
            const got = (page?.items ?? []) as any[];
            if (!got.length) break;
            items.push(...got);
            after = got[got.length - 1].version;
          }
          const cut = items.find((e) => e.type === 'HistorySummarized' || e.type === 'HistoryTrimmed');
          if (cut) firstCutMs.set(conv, Date.parse(cut.occurredAt) - startedAt);
          for (const t of turnIds) {
            const n = items.filter((e) => TURN_ENDING_TYPES.includes(e.type) && e.data?.turnId === t).length;
            if (n === 1) endedOnce++;
            else notOnce++;
          }
        }

        // per minute (or per fifth when shorter than 5 minutes)
        const bucketMs = o.minutes >= 5 ? 60_000 : durationMs / 5;
        const buckets = Math.ceil(durationMs / bucketMs);
        const per: Array<{ p50: number; p99: number; answeredPerSec: number; rss: Record<string, number> }> = [];
        for (let b = 0; b < buckets; b++) {
          const inB = posted.filter((p) => p.at >= b * bucketMs && p.at < (b + 1) * bucketMs && p.ms !== undefined);
          const answered = posted.filter(
            (p) => p.endedAt !== undefined && p.endedAt >= b * bucketMs && p.endedAt < (b + 1) * bucketMs,
          ).length;
          const r = [...rss].reverse().find((x) => x.at < (b + 1) * bucketMs)?.mb ?? {};
          per.push({
            p50: pct(
              inB.map((p) => p.ms!),
              0.5,
            ),
            p99: pct(
              inB.map((p) => p.ms!),
              0.99,
            ),
            answeredPerSec: answered / (bucketMs / 1000),
            rss: r,
          });
          console.log(
            `    ${o.minutes >= 5 ? `minute ${b + 1}` : `fifth ${b + 1}`}: p50 ${fmt(per[b].p50, 0)} ms, p99 ${fmt(per[b].p99, 0)} ms, ${fmt(per[b].answeredPerSec, 1)} answered/s, RSS ${Object.entries(
              r,
            )
              .map(([k, v]) => `${k} ${fmt(v, 0)} MB`)
              .join(', ')}`,
          );
        }
        const answeredAll = posted.filter((p) => p.ms !== undefined).length;
        const lastEnd = Math.max(0, ...posted.map((p) => p.endedAt ?? 0));
        const window = o.minutes >= 10 ? 5 : Math.max(1, Math.round(buckets / 5));
        const lat = (from: number, to: number) =>
          posted.filter((p) => p.ms !== undefined && p.at >= from && p.at < to).map((p) => p.ms!);
        const first = lat(0, window * bucketMs);
        const last = lat(durationMs - window * bucketMs, durationMs);
        const label = o.minutes >= 10 ? '5 min' : o.minutes >= 5 ? `${window} min` : 'fifth';
        add({
          section: 'soak',
          figure: `${o.minutes} min, ${rate} turns/s offered over ${nConv} conversations, 2 workers, ${nSse} SSE clients churning, ${allocatorName}`,
          value: `${posted.length} posted, ${endedOnce} ended exactly once, ${notOnce} not; ${fiveXx} 5xx, ${otherFail} other refusals (statuses ${JSON.stringify(statuses)})`,
          n: notOnce + fiveXx,
          goal: 'every turn ends once, no 5xx',
          ok: notOnce === 0 && fiveXx === 0 && otherFail === 0,
        });
        add({
          section: 'soak',
          figure: 'soak throughput and latency (whole run)',
          value: `${fmt(answeredAll / (Math.max(durationMs, lastEnd) / 1000), 2)} answered/s till the last answer (${fmt(lastEnd / 1000, 0)} s); p50 ${fmt(pct(lat(0, durationMs), 0.5), 0)} ms, p99 ${fmt(pct(lat(0, durationMs), 0.99), 0)} ms`,
          n: pct(lat(0, durationMs), 0.99),
        });
        add({
          section: 'soak',
          figure: `soak p99, last ${label} / first ${label}`,
          value: `${fmt(pct(last, 0.99), 0)} ms`,
          n: pct(last, 0.99),
          anchor: `first ${label} p99 ${fmt(pct(first, 0.99), 0)} ms`,
          ratio: pct(last, 0.99) / pct(first, 0.99),
        });
        add({
          section: 'soak',
          figure: `SSE clients: ${sseStats.sessions} sessions, ${sseStats.frames} events`,
          value: `${sseStats.lost} lost, ${sseStats.repeated} repeated`,
          n: sseStats.lost + sseStats.repeated,
          goal: '0 lost, 0 repeated',
          ok: sseStats.lost + sseStats.repeated === 0,
        });
        // RSS growth after warm-up: from the sample at the end of the first fifth (or minute 5) to the end
        const warm = rss.find((x) => x.at >= Math.min(5 * 60_000, durationMs / 5)) ?? rss[0];
        const end = rss[rss.length - 1];
        if (warm && end)
          for (const p of procs) {
            const g = end.mb[p.name] / warm.mb[p.name];
            add({
              section: 'soak',
              figure: `RSS ${p.name}, end / after warm-up (${fmt(warm.at / 1000, 0)} s)`,
              value: `${fmt(end.mb[p.name], 0)} MB`,
              n: end.mb[p.name],
              anchor: `${fmt(warm.mb[p.name], 0)} MB`,
              ratio: g,
              goal: '≤ +10%',
              ok: g <= 1.1,
            });
            const probe = memoryBetween(p.pid, startedAt + warm.at, Date.now());
            if (probe)
              add({
                section: 'soak',
                figure: `memory of ${p.name}, after warm-up → end (MB)`,
                value: probe,
              });
          }
        // RSS after the warm-up the fold's bound implies: once every conversation's window was cut
        const windowsFullMs = firstCutMs.size === nConv ? Math.max(...firstCutMs.values()) : undefined;
        const full = windowsFullMs === undefined ? undefined : rss.find((x) => x.at >= windowsFullMs);
        add({
          section: 'soak',
          figure: "every conversation's history cut at least once (its window at its bound)",
          value:
            windowsFullMs === undefined
              ? `not within the run (${firstCutMs.size} of ${nConv} conversations cut)`
              : `at ${fmt(windowsFullMs / 60_000, 1)} min`,
        });
        if (full && end && full !== end)
          for (const p of procs) {
            const g = end.mb[p.name] / full.mb[p.name];
            add({
              section: 'soak',
              figure: `RSS ${p.name}, end / once every window was at its bound (${fmt(full.at / 1000, 0)} s)`,
              value: `${fmt(end.mb[p.name], 0)} MB`,
              n: end.mb[p.name],
              anchor: `${fmt(full.mb[p.name], 0)} MB`,
              ratio: g,
              goal: '≤ +10%',
              ok: g <= 1.1,
            });
          }
        return per;
      },
    );
  } finally {
    clearInterval(resetTimer);
    await proxy.close();
    await fake.close();
  }
}

if (require.main === module) {
  // npm run bench:soak -- --minutes 60 [--heap-snapshots [5,30]] [--allocator glibc]
  void (async () => {
    const { runMain } = await import('./run');
    const arg = (name: string) => {
      const i = process.argv.indexOf(name);
      return i < 0 ? undefined : (process.argv[i + 1] ?? '');
    };
    const minutes = Number(arg('--minutes') ?? 60);
    const snapshots = arg('--heap-snapshots');
    const heapSnapshotsAt =
      snapshots === undefined
        ? undefined
        : /^[\d.,]+$/.test(snapshots)
          ? snapshots.split(',').map(Number)
          : [Math.min(5, minutes / 4), minutes / 2];
    const allocator = arg('--allocator') === 'glibc' ? 'glibc' : 'jemalloc';
    await runMain(['soak'], { soakMinutes: minutes, heapSnapshotsAt, allocator });
  })();
}
