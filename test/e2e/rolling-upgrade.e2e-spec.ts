/**
 * A rolling upgrade from the previous release to this code, under load, as docs/operations.md
 * ("Upgrades") tells an operator to roll it: the new migrations run while the old release serves,
 * the new API and worker start beside the old ones, then the old ones get SIGTERM. Old and new
 * processes share the database, the queue and each other's events meanwhile.
 */
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { Client } from 'pg';
import { TURN_ENDING_TYPES } from '@parley/conversation';
import { projectRoot } from '@parley/platform';
import { FakeAnthropic, FakeReply } from '../support/fake-anthropic/fake-anthropic.server';
import { buildPreviousRelease } from '../support/previous-release';
import {
  fakeAnthropicEnv,
  freePort,
  Proc,
  SERVICE_NODE_ARGS,
  startProcess,
  TEST_JWT_SECRET,
  tokenFor,
} from '../support/stack';
import { redisUrl } from '../support/test-database';
import { waitFor } from '../support/wait-for';

const run = promisify(execFile);
const CURRENT = projectRoot(__dirname);
const READERS = 8;
const PHASE_MS = 3_000;

/** A plain answer (no book, so one model call a turn), streamed over ~200 ms. */
const answer = (): FakeReply => ({
  content: [{ type: 'text', text: Array.from({ length: 20 }, (_, i) => `w${i}`).join(' ') }],
  delayMsPerChunk: 10,
});

type Api = Proc & { base: string };

describe('a rolling upgrade from the previous release, under load (e2e)', () => {
  let previous: string;
  let fake: FakeAnthropic;
  let dbName: string;
  let env: Record<string, string>;
  const procs: Proc[] = [];

  const adminUrl = () => {
    const u = new URL(process.env.PARLEY_TEST_TEMPLATE_URL!);
    u.pathname = '/postgres';
    return u;
  };
  const admin = async (sql: string) => {
    const c = new Client({ connectionString: adminUrl().toString() });
    await c.connect();
    await c.query(sql).finally(() => c.end());
  };

  beforeAll(async () => {
    previous = await buildPreviousRelease();
    fake = await FakeAnthropic.start({ defaultResponder: answer });
    // the previous release's own database: its migrations alone, as it was deployed
    dbName = `parley_t${process.env.PARLEY_TEST_RUN}_roll_${randomBytes(4).toString('hex')}`;
    await admin(`CREATE DATABASE "${dbName}"`);
    const url = adminUrl();
    url.pathname = `/${dbName}`;
    env = {
      NODE_ENV: 'production',
      DATABASE_URL: url.toString(),
      REDIS_URL: redisUrl(),
      AUTH_JWT_SECRET: TEST_JWT_SECRET,
      QUEUE_PREFIX: `roll${randomBytes(4).toString('hex')}`,
      ...fakeAnthropicEnv(fake.url),
      LLM_MODEL: 'claude-sonnet-5-5',
      // a budget no turn reaches: the new API records it on every post, the old worker reads past it
      BUDGET_USD_PER_MONTH: '1000',
      LOG_LEVEL: 'warn',
      EVENT_POLL_MS: '500',
      RATE_LIMIT_POSTS_PER_MIN: '100000',
    };
    await run(process.execPath, [path.join(previous, 'dist/scripts/migrate.js')], { env: { ...process.env, ...env } });
  }, 600_000);

  afterAll(async () => {
    await Promise.all(procs.map((p) => p.kill('SIGKILL')));
    await fake?.close();
    if (dbName) await admin(`DROP DATABASE IF EXISTS "${dbName}" WITH (FORCE)`);
    if (dbName) await admin(`DROP DATABASE IF EXISTS "${dbName}_erasure_journal" WITH (FORCE)`); // made by the new release
  });

  const startApi = async (root: string, name: string): Promise<Api> => {
    const port = await freePort();
    const p = startProcess(name, [...SERVICE_NODE_ARGS, path.join(root, 'dist/apps/api/src/main.js')], {
      ...env,
      PORT: String(port),
    });
    procs.push(p);
    const api = { ...p, base: `http://127.0.0.1:${port}` };
    await waitFor(
      `${name} /readyz`,
      async () => {
        if (p.child.exitCode !== null) throw new Error(`${name} exited:\n${p.output()}`);
        return (await fetch(`${api.base}/readyz`).catch(() => undefined))?.ok;
      },
      30_000,
      100,
    );
    return api;
  };
  const startWorker = (root: string, name: string): Proc => {
    const p = startProcess(name, [...SERVICE_NODE_ARGS, path.join(root, 'dist/apps/worker/src/main.js')], env);
    procs.push(p);
    return p;
  };

  it('ends every turn once, answers no 5xx, buys no answer twice, and the old API answers while the new migrations run', async () => {
    const oldApi = await startApi(previous, 'old-api');
    const oldWorker = startWorker(previous, 'old-worker');
    const load = new Load([oldApi.base]);
    load.start();
    await waitFor('the old release to answer', async () => load.answered > 0, 30_000, 100).catch((e: Error) => {
      throw new Error(`${e.message}\n${logsOf(procs)}`);
    });
    await sleep(PHASE_MS);

    // 1. the new release's migrations, while the old release serves
    const answeredBefore = load.answered;
    const migrated = Date.now();
    await migrateAsDocumented(env);
    const migrationMs = Date.now() - migrated;
    await sleep(PHASE_MS / 2);
    if (load.answered <= answeredBefore) throw new Error(`no turn answered while migrating:\n${logsOf(procs)}`);

    // 2. the new API and worker beside the old ones
    const newApi = await startApi(CURRENT, 'new-api');
    startWorker(CURRENT, 'new-worker');
    load.bases = [oldApi.base, newApi.base];
    await sleep(PHASE_MS);

    // 3. the old ones stop: out of the balancer first, then SIGTERM, each drains what it holds
    load.bases = [newApi.base];
    await Promise.all([drained(oldApi), drained(oldWorker)]);
    await sleep(PHASE_MS);
    await load.stop();

    // one read a conversation, one after another: the check must not be a load of its own
    const conversations = [...new Set(load.turns.map((t) => t.conversationId))];
    const endingsNow = async () => {
      const all = new Map<string, Array<{ type: string; turnId: string }>>();
      for (const id of conversations) all.set(id, await load.endingsOf(id));
      return all;
    };
    const ended = (all: Map<string, Array<{ turnId: string }>>) =>
      load.turns.every((t) => all.get(t.conversationId)!.some((e) => e.turnId === t.turnId));
    const byConversation = await waitFor(
      'every posted turn to end',
      async () => {
        const all = await endingsNow();
        return ended(all) ? all : undefined;
      },
      60_000,
      250,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n${logsOf(procs)}`);
    });
    for (const t of load.turns) {
      const endings = byConversation.get(t.conversationId)!.filter((e) => e.turnId === t.turnId);
      expect({ turnId: t.turnId, endings: endings.map((e) => e.type) }).toEqual({
        turnId: t.turnId,
        endings: ['AssistantReplied'],
      });
    }
    expect(load.serverErrors).toEqual([]);
    // one model call a turn, bought once whichever release made it
    expect(fake.requests).toHaveLength(load.turns.length);
    expect(load.turns.length).toBeGreaterThan(READERS * 3);
    console.log(
      `rolling upgrade: ${load.turns.length} turns, migrations ran ${migrationMs} ms under load, ` +
        `${load.retried} requests retried on another API (connection refused while one stopped)`,
    );
  }, 300_000);
});

/** This release's migrations, run again when one gave up on a lock (lock_timeout), as docs/operations.md says. */
async function migrateAsDocumented(env: Record<string, string>): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await run(process.execPath, [path.join(CURRENT, 'dist/scripts/migrate.js')], { env: { ...process.env, ...env } });
      return;
    } catch (e) {
      if (attempt === 3 || !/lock timeout/i.test(String((e as { stderr?: string }).stderr ?? e))) throw e;
    }
  }
}

/** SIGTERM, then the process's own drain, however long its grace period lets it take (no SIGKILL after 5 s). */
async function drained(p: Proc): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  const exited = new Promise<void>((r) => p.child.once('exit', () => r()));
  p.child.kill('SIGTERM');
  await exited;
}

/** What the processes said: the first thing to read when the rollout fails. */
const logsOf = (procs: Proc[]) => procs.map((p) => `--- ${p.name}\n${p.output().slice(-4_000)}`).join('\n');

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * READERS readers, each asking in its own conversation and waiting for the answer before asking
 * again, through whichever APIs the balancer (`bases`) holds. A connection refused is tried on
 * another API, as a balancer does; a 5xx is recorded as a failure.
 */
class Load {
  readonly turns: Array<{ conversationId: string; turnId: string; token: string }> = [];
  readonly serverErrors: string[] = [];
  answered = 0;
  retried = 0;
  private running = false;
  private loops: Promise<void>[] = [];
  private next = 0;
  private readonly readers = Array.from({ length: READERS }, () => {
    const userId = `roll-${randomUUID()}`;
    return { token: tokenFor(userId), conversationId: '' };
  });

  constructor(public bases: string[]) {}

  start(): void {
    this.running = true;
    this.loops = this.readers.map((r) => this.loop(r));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
  }

  async endingsOf(conversationId: string): Promise<Array<{ type: string; turnId: string }>> {
    const token = this.turns.find((t) => t.conversationId === conversationId)!.token;
    const r = await this.call(token, 'GET', `/v1/conversations/${conversationId}/events?limit=1000`);
    const items = (r?.body?.items ?? []) as Array<{ type: string; data: { turnId?: string } }>;
    return items
      .filter((e) => TURN_ENDING_TYPES.includes(e.type as never))
      .map((e) => ({ type: e.type, turnId: e.data.turnId! }));
  }

  private async loop(reader: { token: string; conversationId: string }): Promise<void> {
    const started = await this.call(reader.token, 'POST', '/v1/conversations', {});
    reader.conversationId = started!.body.id;
    for (let i = 0; this.running; i++) {
      const posted = await this.call(reader.token, 'POST', `/v1/conversations/${reader.conversationId}/messages`, {
        content: `question ${i}`,
      });
      if (posted?.status !== 202) continue;
      this.turns.push({ conversationId: reader.conversationId, turnId: posted.body.turnId, token: reader.token });
      await waitFor(
        `turn ${posted.body.turnId} to end`,
        async () => {
          const r = await this.call(
            reader.token,
            'GET',
            `/v1/conversations/${reader.conversationId}/events?after=${posted.body.version}`,
          );
          return (r?.body?.items ?? []).some(
            (e: { type: string; data: { turnId?: string } }) =>
              TURN_ENDING_TYPES.includes(e.type as never) && e.data.turnId === posted.body.turnId,
          );
        },
        60_000,
        50,
      );
      this.answered++;
    }
  }

  /** One request through the balancer; undefined when no API took it. */
  private async call(
    token: string,
    method: string,
    url: string,
    body?: unknown,
  ): Promise<{ status: number; body: any } | undefined> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const base = this.bases[this.next++ % this.bases.length];
      try {
        const res = await fetch(base + url, {
          method,
          headers: { authorization: `Bearer ${token}`, ...(body ? { 'content-type': 'application/json' } : {}) },
          body: body ? JSON.stringify(body) : undefined,
        });
        const text = await res.text();
        if (res.status >= 500) this.serverErrors.push(`${method} ${url} → ${res.status} ${text.slice(0, 200)}`);
        return { status: res.status, body: text ? JSON.parse(text) : undefined };
      } catch {
        this.retried++;
        await sleep(50);
      }
    }
    return undefined;
  }
}
