/**
 * Where a one-call turn's time goes (the `stages` section): sequential turns with the scripted
 * model, each cut at the clocks the path leaves behind on this one machine: the client's send,
 * the appends' `occurredAt` (the database's clock), the BullMQ job's `timestamp` (added),
 * `processedOn` (taken by the worker) and `finishedOn`, and the SSE frame's arrival. Medians.
 */
import { Redis } from 'ioredis';
import { runTurnJobId, AGENT_TURNS_QUEUE } from '@parley/agent';
import { redisUrl } from '../test/support/test-database';
import { add } from './report';
import { benchClient, newConversation, withStack } from './service';
import { fmt, pct, secs, turnWatcher } from './util';

interface Stages {
  postToAppend: number;
  appendTo202: number;
  addToTaken: number;
  takenToReply: number;
  replyToSse: number;
  replyToJobDone: number;
  total: number;
}

const LABELS: Record<keyof Stages, string> = {
  postToAppend: 'POST sent → UserMessagePosted stored (auth, checks, fold, INSERT)',
  appendTo202: 'UserMessagePosted stored → 202 at the client (enqueue, answer)',
  addToTaken: 'job added → taken by the worker (BullMQ wake-up)',
  takenToReply: 'job taken → AssistantReplied stored (fold, plan, model, keep, INSERT)',
  replyToSse: 'AssistantReplied stored → its SSE frame at the client',
  replyToJobDone: 'AssistantReplied stored → job finished (after-turn work)',
  total: 'POST sent → AssistantReplied on SSE',
};

export async function turnStagesBench(): Promise<void> {
  await withStack({ apis: 1, workers: 1, env: { LLM_PROVIDER: 'scripted' } }, async (stack) => {
    const client = benchClient(stack);
    const id = await newConversation(client);
    const watcher = await turnWatcher(client.base, client.auth, id);
    const redis = new Redis(redisUrl());
    const rows: Stages[] = [];
    try {
      const n = secs(100, 20);
      for (let i = 0; i < n + 10; i++) {
        const sentAt = Date.now();
        const sentPerf = performance.now();
        const r = await client.req('POST', `/v1/conversations/${id}/messages`, { content: `question ${i}` });
        const answeredPerf = performance.now();
        const turnId = r.body?.turnId as string;
        const reply = await watcher.waitReply(turnId);
        if (i < 10) continue;
        const events = await client.req('GET', `/v1/conversations/${id}/events?after=0&limit=1000`);
        const at = (type: string) =>
          Date.parse(
            (events.body.items as Array<{ type: string; data: { turnId?: string }; occurredAt: string }>).find(
              (e) => e.type === type && e.data.turnId === turnId,
            )!.occurredAt,
          );
        const job = await redis.hgetall(`${stack.env.QUEUE_PREFIX}:${AGENT_TURNS_QUEUE}:${runTurnJobId(id, turnId)}`);
        const posted = at('UserMessagePosted');
        const replied = at('AssistantReplied');
        const sseAt = sentAt + (reply.at - sentPerf);
        rows.push({
          postToAppend: posted - sentAt,
          appendTo202: sentAt + (answeredPerf - sentPerf) - posted,
          addToTaken: Number(job.processedOn) - Number(job.timestamp),
          takenToReply: replied - Number(job.processedOn),
          replyToSse: sseAt - replied,
          replyToJobDone: Number(job.finishedOn) - replied,
          total: reply.at - sentPerf,
        });
      }
    } finally {
      watcher.close();
      redis.disconnect();
    }
    for (const key of Object.keys(LABELS) as Array<keyof Stages>) {
      const values = rows.map((r) => r[key]).filter((v) => Number.isFinite(v));
      add({
        section: 'stages',
        figure: LABELS[key],
        value: `p50 ${fmt(pct(values, 0.5), 1)} ms, p90 ${fmt(pct(values, 0.9), 1)} ms`,
        n: pct(values, 0.5),
      });
    }
  });
}
