/**
 * Figure 10, "flat cost": one conversation with a book (data/books/alice.txt) and N turns one
 * after another, the real SDK in the worker against the fake Messages API, each turn one
 * search_book call then a text answer. Per turn: the worker's CPU (utime+stime from /proc), POST →
 * AssistantReplied, and the size of the model request. The peers' anchor: the SDK tool-use loop
 * alone (no database, a search tool returning a fixed passage) in this process, CPU per turn.
 */
import Anthropic from '@anthropic-ai/sdk';
import path from 'node:path';
import { projectRoot } from '../libs/platform/src/project-root';
import { FakeAnthropic } from '../test/support/fake-anthropic/fake-anthropic.server';
import { Client, fakeAnthropicEnv, Stack, startProcess } from '../test/support/stack';
import { waitFor } from '../test/support/wait-for';
import { ALICE_PASSAGE, aliceQuestions, uploadAlice } from './alice';
import { add } from './report';
import { benchClient, liveConversation, LiveConversation, withStack } from './service';
import { cpuMs, fmt, mean, pct } from './util';

const ROOT = projectRoot(__dirname);

interface TurnRecord {
  turn: number;
  cpuMs: number;
  ms: number;
  requestKiB: number;
}

export async function longConversationBench(turns = 500): Promise<void> {
  const fake = await FakeAnthropic.start();
  const records: TurnRecord[] = [];
  let cold: ColdTurn | undefined;
  try {
    await withStack({ apis: 1, workers: 1, env: { ...fakeAnthropicEnv(fake.url) } }, async (stack) => {
      const alice = benchClient(stack);
      const bookId = await uploadAlice(alice);
      const conv = await liveConversation(alice, bookId);
      const pid = stack.workers[0].child.pid!;
      const qs = aliceQuestions();
      fake.reset();
      try {
        for (let t = 1; t <= turns; t++) {
          const c0 = cpuMs(pid);
          const r = await conv.turn(qs[t % qs.length]);
          const c1 = cpuMs(pid);
          if (r.type !== 'AssistantReplied') throw new Error(`turn ${t} ended ${r.type}`);
          const sizes = fake.requests.map((q) => Buffer.byteLength(q.rawBody));
          records.push({ turn: t, cpuMs: c1 - c0, ms: r.ms, requestKiB: Math.max(0, ...sizes) / 1024 });
          fake.reset();
          if (t % 50 === 0)
            console.log(
              `    turn ${t}: ${fmt(c1 - c0, 0)} ms CPU, ${fmt(r.ms, 0)} ms, ${fmt(Math.max(...sizes) / 1024, 1)} KiB`,
            );
        }
        cold = await turnOnAFreshWorker(stack, alice, bookId, conv, qs);
      } finally {
        conv.close();
      }
    });
  } finally {
    await fake.close();
  }
  const points = [1, 20, 100, 200, 500].filter((p) => p <= turns);
  if (!points.includes(turns)) points.push(turns);
  const window = (p: number) => {
    const lo = Math.max(1, Math.min(p - 5, turns - 9));
    return records.filter((r) => r.turn >= lo && r.turn < lo + 10);
  };
  const stats = new Map<number, { cpu: number; p50: number; kib: number }>();
  for (const p of points) {
    const w = window(p);
    const s = {
      cpu: mean(w.map((r) => r.cpuMs)),
      p50: pct(
        w.map((r) => r.ms),
        0.5,
      ),
      kib: mean(w.map((r) => r.requestKiB)),
    };
    stats.set(p, s);
    add({
      section: 'long conversation',
      figure: `turn ~${p} (turns ${w[0].turn}–${w[w.length - 1].turn})`,
      value: `worker CPU ${fmt(s.cpu, 1)} ms/turn, p50 ${fmt(s.p50, 0)} ms, request ${fmt(s.kib, 1)} KiB`,
      n: s.cpu,
    });
  }
  const a = stats.get(20);
  const b = stats.get(turns);
  if (a && b) {
    add({
      section: 'long conversation',
      figure: `worker CPU, turn ${turns} / turn 20`,
      value: `${fmt(b.cpu, 1)} ms`,
      n: b.cpu,
      anchor: `${fmt(a.cpu, 1)} ms at turn 20`,
      ratio: b.cpu / a.cpu,
      goal: '≤ 1.2',
      ok: b.cpu / a.cpu <= 1.2,
    });
    add({
      section: 'long conversation',
      figure: `p50 latency, turn ${turns} / turn 20`,
      value: `${fmt(b.p50, 0)} ms`,
      n: b.p50,
      anchor: `${fmt(a.p50, 0)} ms at turn 20`,
      ratio: b.p50 / a.p50,
      goal: '≤ 1.2',
      ok: b.p50 / a.p50 <= 1.2,
    });
  }
  if (cold) {
    add({
      section: 'long conversation',
      figure: `turn ${turns + 1} on a worker that has not seen the conversation (after a deploy): worker CPU`,
      value: `${fmt(cold.coldCpuMs, 1)} ms (its stream holds ${cold.events} events)`,
      n: cold.coldCpuMs,
      anchor: `${fmt(cold.warmCpuMs, 1)} ms a turn after it on the same worker`,
      ratio: cold.coldCpuMs / cold.warmCpuMs,
    });
  }
  const peer = await sdkLoopAnchor();
  const at20 = stats.get(20);
  add({
    section: 'long conversation',
    figure: 'peers: SDK tool-use loop alone (search tool → fixed passage), CPU per search turn',
    value: `${fmt(peer, 1)} ms/turn`,
    n: peer,
    anchor: at20 ? `Parley worker ${fmt(at20.cpu, 1)} ms at turn 20` : undefined,
    ratio: at20 ? at20.cpu / peer : undefined,
  });
  return;
}

interface ColdTurn {
  coldCpuMs: number;
  warmCpuMs: number;
  events: number;
}

/**
 * What a deploy costs a long conversation: a new worker takes over (the old one stops), answers a
 * turn of a new conversation first (so its JIT and connections are warm), then the long
 * conversation's next turn, which it folds from the stream's latest snapshot and the events after
 * it (fold_snapshots), then five more turns.
 */
async function turnOnAFreshWorker(
  stack: Stack,
  reader: Client,
  bookId: string,
  long: LiveConversation,
  questions: string[],
): Promise<ColdTurn> {
  const fresh = await stack.startWorker();
  await stack.workers[0].kill();
  const pid = fresh.child.pid!;
  const other = await liveConversation(reader, bookId);
  try {
    for (let i = 0; i < 3; i++) await other.turn(questions[i]);
  } finally {
    other.close();
  }
  const cpuOf = async (q: string) => {
    const c0 = cpuMs(pid);
    const r = await long.turn(q);
    if (r.type !== 'AssistantReplied') throw new Error(`turn on the fresh worker ended ${r.type}`);
    return cpuMs(pid) - c0;
  };
  const coldCpuMs = await cpuOf(questions[0]);
  const warm: number[] = [];
  for (let i = 1; i <= 5; i++) warm.push(await cpuOf(questions[i]));
  const events = (await reader.req('GET', `/v1/conversations/${long.id}`)).body.version as number;
  return { coldCpuMs, warmCpuMs: mean(warm), events };
}

/** CPU of this process per search turn, the fake in a process of its own; history kept, as a chat would. */
async function sdkLoopAnchor(turns = 40): Promise<number> {
  const fakeProc = startProcess('fake', [path.join(ROOT, 'dist/bench/fake-server.js')], {});
  try {
    let url = '';
    await waitFor(
      'the fake Messages API process',
      () => {
        url = /listening (\S+)/.exec(fakeProc.output())?.[1] ?? '';
        return Boolean(url);
      },
      15_000,
    );
    const sdk = new Anthropic({ baseURL: url, apiKey: 'sk-fake', maxRetries: 0 });
    const tools: Anthropic.Tool[] = [
      {
        name: 'search_book',
        description: 'Search the book for passages',
        input_schema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
      },
    ];
    const messages: Anthropic.MessageParam[] = [];
    const qs = aliceQuestions();
    const cpu: number[] = [];
    for (let t = 0; t < turns; t++) {
      const c0 = process.cpuUsage();
      messages.push({ role: 'user', content: qs[t % qs.length] });
      for (let i = 0; i < 5; i++) {
        const msg = await sdk.messages
          .stream({
            model: 'claude-sonnet-5-5',
            max_tokens: 1024,
            system: 'You answer from the book.',
            tools,
            messages,
          })
          .finalMessage();
        messages.push({ role: 'assistant', content: msg.content });
        const uses = msg.content.filter((b): b is Anthropic.ToolUseBlock => b.type === 'tool_use');
        if (!uses.length) break;
        messages.push({
          role: 'user',
          content: uses.map((u) => ({ type: 'tool_result' as const, tool_use_id: u.id, content: ALICE_PASSAGE })),
        });
      }
      const d = process.cpuUsage(c0);
      cpu.push((d.user + d.system) / 1000);
    }
    return mean(cpu.slice(10));
  } finally {
    await fakeProc.kill();
  }
}
