/**
 * The terminal client (npm run cli) end to end: the built dist/scripts/cli.js against a running
 * API and worker, with the model played by the fake Anthropic API. The chat runs in a real
 * pseudo-terminal (tmux), keys and all; one-shot commands run as child processes.
 */
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EPUB3_FACTS, epub3Book } from '../support/book-fixtures';
import { FakeReply, RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { startFlakyProxy } from '../support/flaky-proxy';
import { openPane, Pane } from '../support/tmux';
import { clientFor, Client, freePort, startStack, Stack, TEST_JWT_SECRET } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';

const ROOT = path.resolve(__dirname, '../..');
const CLI = path.join(ROOT, 'dist/scripts/cli.js');
/** a long answer with numbered words, so a repeat or a gap on screen is plain to see */
const NUMBERED = Array.from({ length: 120 }, (_, i) => `w${i + 1}`).join(' ');

function question(req: RecordedRequest): string {
  const first = req.body.messages.filter((m: any) => m.role === 'user').pop();
  return JSON.stringify(req.body.messages.slice(-3)) + JSON.stringify(first ?? '');
}

/** Searches once, then answers; words in the question choose how. */
function model(req: RecordedRequest): FakeReply {
  const msgs = req.body.messages;
  const last = msgs[msgs.length - 1];
  const hasResults = Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
  if (!hasResults) {
    return {
      content: [
        { type: 'text', text: 'Let me look in the book.' },
        { type: 'tool_use', name: 'search_book', input: { query: 'caterpillar mushroom' } },
      ],
    };
  }
  const q = question(req);
  if (q.includes('SLOW'))
    return { content: [{ type: 'text', text: 'slow '.repeat(400) + '[1]' }], delayMsPerChunk: 60 };
  if (q.includes('NUMBERED')) return { content: [{ type: 'text', text: `${NUMBERED} [1]` }], delayMsPerChunk: 40 };
  return {
    content: [{ type: 'text', text: 'Alice met a Caterpillar sitting on a mushroom [1].' }],
    delayMsPerChunk: 10,
  };
}

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('terminal client (e2e, tmux)', () => {
  let user: string;
  let api: Client;
  let bookId: string;
  const panes: Pane[] = [];
  // registered before the stack: the clients in the panes end before the stack stops
  afterAll(() => {
    for (const p of panes) p.kill();
  });
  const service = useFakeStack({ fake: { defaultResponder: model }, env: { LLM_MODEL: 'claude-sonnet-5-5' } });

  const env = (over: Record<string, string> = {}) => ({
    PARLEY_URL: service.stack.base,
    AUTH_JWT_SECRET: TEST_JWT_SECRET,
    PARLEY_USER: user,
    NO_COLOR: '1',
    ...over,
  });

  const run = (args: string[], over: Record<string, string> = {}, stdin?: string): Promise<Run> =>
    new Promise((resolve) => {
      const clean = { ...process.env };
      delete clean.PARLEY_TOKEN;
      const child = execFile(
        process.execPath,
        [CLI, ...args],
        { cwd: ROOT, env: { ...clean, ...env(over) }, timeout: 60_000 },
        (err, stdout, stderr) => {
          const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
      child.stdin!.end(stdin ?? '');
    });

  const chat = (args: string[], over: Record<string, string> = {}) => {
    const pane = openPane([process.execPath, CLI, 'chat', ...args], env(over), { cwd: ROOT });
    panes.push(pane);
    return pane;
  };
  /** waits for prompt number `after + 1`, empty and waiting (tmux trims the space after it) */
  const prompt = (pane: Pane, after = 0) =>
    pane.until(
      `prompt ${after + 1}`,
      (s) => (s.match(/^you>/gm) ?? []).length > after && /^you>\s*$/.test(s.trimEnd().split('\n').pop()!),
    );
  const say = (pane: Pane, text: string) => {
    pane.type(text);
    pane.keys('Enter');
  };
  const events = async (cid: string) =>
    (await api.req('GET', `/v1/conversations/${cid}/events`)).body.items as Array<{ type: string; data: any }>;
  const conversationIdOn = (screen: string) =>
    /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(screen)![0];

  beforeAll(() => {
    user = `cli-${randomUUID()}`;
    api = clientFor(service.stack.base, user);
  });
  afterEach(() => {
    for (const p of panes.splice(0)) p.kill();
  });

  it('books add uploads over HTTP and follows the ingestion; books list and show print it', async () => {
    const added = await run(['books', 'add', 'data/books/alice.txt', '--title', 'Alice in Wonderland']);
    expect(added).toMatchObject({ code: 0 });
    bookId = /^([0-9a-f-]{36})\s+Alice in Wonderland/m.exec(added.stdout)![1];
    const listed = await run(['books', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${bookId}  Alice in Wonderland`);
    const shown = await run(['books', 'show', bookId]);
    expect(shown.stdout).toMatch(/^\s+5\s+CHAPTER V\. Advice from a Caterpillar/im);
    const json = JSON.parse((await run(['books', 'list', '--json'])).stdout);
    expect(json).toEqual([expect.objectContaining({ id: bookId, status: 'ready' })]);
  }, 90_000);

  it('chat: a question streams in, then its sources; quit leaves with 0', async () => {
    const pane = chat([bookId, '--new', '--position', '6']);
    await prompt(pane);
    expect(pane.screen()).toContain('reading position: up to chapter 6');
    say(pane, 'Who sat on the mushroom?');
    const screen = await pane.until('the sources', (s) => /sources:\n\s+\[1\] CHAPTER/i.test(s));
    expect(screen).toContain('Let me look in the book.');
    expect(screen.split('Alice met a Caterpillar sitting on a mushroom [1].').length).toBe(2); // once
    expect(screen).not.toContain('search_book'); // tool calls only with --verbose
    await prompt(pane, 1);
    say(pane, 'quit');
    expect(await pane.exitCode()).toBe(0);
  }, 60_000);

  it('chat --verbose shows each tool call and what it found; /history and /position work', async () => {
    const pane = chat([bookId, '--new', '--verbose']);
    await prompt(pane);
    const cid = conversationIdOn(pane.screen());
    say(pane, 'Who sat on the mushroom?');
    const screen = await prompt(pane, 1); // the answer is complete once the prompt is back
    expect(screen).toMatch(/⚙ search_book "caterpillar mushroom"/);
    expect(screen).toMatch(/↳ \d+ passages? \(/);
    expect(screen).toMatch(/2 model calls, \d+ in \/ \d+ out tokens.*, \$\d+\.\d{4}/);
    say(pane, '/position 3');
    await pane.until('the new position', (s) => s.includes('reading position: up to chapter 3'));
    expect((await api.req('GET', `/v1/conversations/${cid}`)).body.readingPosition).toBe(3);
    say(pane, '/history');
    await pane.until('the history', (s) => /agent ran search_book/.test(s) && /moved the reading position/.test(s));
    pane.keys('C-d');
    expect(await pane.exitCode()).toBe(0);
  }, 60_000);

  it('Ctrl-C during a reply cancels the turn and the text stops; Ctrl-C at the prompt leaves', async () => {
    const pane = chat([bookId, '--new']);
    await prompt(pane);
    const cid = conversationIdOn(pane.screen());
    say(pane, 'SLOW please');
    await pane.until('the reply to stream', (s) => (s.match(/slow/g) ?? []).length > 10);
    pane.keys('C-c');
    // within a second of the key the text stops: what is on screen then is all there will be
    await new Promise((r) => setTimeout(r, 1_000));
    const words = (pane.screen().match(/slow/g) ?? []).length;
    expect(words).toBeLessThan(400);
    await pane.until('the cancel', (s) => s.includes('(cancelled)'), 10_000);
    await waitFor('TurnCancelled in the log', async () => (await events(cid)).some((e) => e.type === 'TurnCancelled'));
    await new Promise((r) => setTimeout(r, 1_500));
    expect((pane.screen().match(/slow/g) ?? []).length).toBe(words);
    expect((await events(cid)).some((e) => e.type === 'AssistantReplied')).toBe(false);
    await service.fake.waitFor('the worker to drop the model stream', () => service.fake.aborted > 0);
    await prompt(pane, 1);
    pane.keys('C-c');
    expect(await pane.exitCode()).toBe(0);
  }, 60_000);

  it('a dropped connection resumes from Last-Event-ID without printing anything twice', async () => {
    const proxy = await startFlakyProxy(Number(new URL(service.stack.base).port));
    try {
      const pane = chat([bookId, '--new'], { PARLEY_URL: proxy.base });
      await prompt(pane);
      say(pane, 'NUMBERED words');
      const before = await pane.until('the reply to start', (s) => /\bw10\b/.test(s));
      proxy.cutAll();
      expect(before).not.toContain('w120'); // cut mid-reply: deltas are lost, the stored text fills in
      const screen = await pane.until('the whole reply', (s) => s.includes('sources:'), 30_000);
      expect(proxy.cuts).toBeGreaterThan(0);
      const flat = screen.replace(/\s+/g, ' ');
      expect(flat.split(`${NUMBERED} [1]`).length).toBe(2); // every word, in order, once
      expect(flat.split('Let me look in the book.').length).toBe(2);
      pane.keys('C-d');
      expect(await pane.exitCode()).toBe(0);
    } finally {
      await proxy.close();
    }
  }, 60_000);

  it('chat without a book lists the books, then the conversations to resume; /fork continues in a copy', async () => {
    const { body: existing } = await api.req('POST', '/v1/conversations', { bookId, title: 'Tea party notes' });
    await waitFor('the list read model to have it', async () =>
      (await api.req('GET', `/v1/conversations?bookId=${bookId}`)).body.items.some((c: any) => c.id === existing.id),
    );
    const pane = chat([]);
    await pane.until('the books', (s) => /Your books:\n\s+1\) Alice in Wonderland/.test(s));
    pane.type('1');
    pane.keys('Enter');
    const line = new RegExp(`(\\d+)\\) Tea party notes .*${existing.id}`);
    const listed = await pane.until('the conversations', (s) => /0\) a new conversation/.test(s) && line.test(s));
    const n = line.exec(listed)![1];
    pane.type(n);
    pane.keys('Enter');
    await prompt(pane);
    expect(pane.screen()).toContain(`conversation ${existing.id} "Tea party notes"`);
    say(pane, 'Who sat on the mushroom?');
    await pane.until('the answer', (s) => s.includes('sources:'));
    await prompt(pane, 1);
    say(pane, '/fork');
    const forked = await pane.until('the fork', (s) => /now in conversation ([0-9a-f-]{36})/.test(s));
    const forkId = /now in conversation ([0-9a-f-]{36})/.exec(forked)![1];
    expect(forkId).not.toBe(existing.id);
    await prompt(pane, 2);
    say(pane, 'exit');
    expect(await pane.exitCode()).toBe(0);
    const copied = (await events(forkId)).map((e) => e.type);
    expect(copied).toEqual(expect.arrayContaining(['UserMessagePosted', 'AssistantReplied']));

    // the same conversations from the one-shot commands
    const list = await run(['conversations', 'list', '--book', bookId]);
    expect(list.stdout).toContain(`${existing.id}  Tea party notes`);
    expect((await run(['conversations', 'rename', forkId, 'The', 'fork'])).stdout).toContain(`${forkId}  The fork`);
    expect((await run(['conversations', 'show', forkId])).stdout).toMatch(/The fork .*\n.*version \d+/);
    expect(await run(['conversations', 'delete', forkId])).toMatchObject({ code: 0 });
    expect((await run(['conversations', 'show', forkId])).code).toBe(5);
  }, 60_000);

  it('chat ends with exit code 5 when its conversation is deleted elsewhere', async () => {
    const pane = chat([bookId, '--new']);
    await prompt(pane);
    const cid = conversationIdOn(pane.screen());
    expect((await api.req('DELETE', `/v1/conversations/${cid}`)).status).toBe(204);
    await pane.until('the notice', (s) => s.includes('this conversation was deleted'));
    expect(await pane.exitCode()).toBe(5);
  }, 60_000);

  it('chat reads questions from a pipe too, and ends with the input', async () => {
    const r = await run(['chat', bookId, '--new'], {}, 'Who sat on the mushroom?\n/history\n');
    // on failure, Jest prints what the client wrote and said
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 });
    const answer = 'Alice met a Caterpillar sitting on a mushroom \\[1\\]\\.\n';
    expect(r.stdout).toMatch(new RegExp(`${answer}[^]*${answer}`)); // the answer, then in the history
    expect(r.stdout).toMatch(/sources:\n\s+\[1\] CHAPTER V/);
  }, 60_000);

  it('chat says when a spent budget resets, and goes on; token --budget mints the claim', async () => {
    const minted = await run(['token', '--user', user, '--budget', '0']);
    expect(minted).toMatchObject({ code: 0 });
    const r = await run(['chat', bookId, '--new'], { PARLEY_TOKEN: minted.stdout.trim() }, 'Who?\n/help\n');
    expect({ code: r.code, stderr: r.stderr }).toMatchObject({ code: 0 });
    expect(r.stdout).toMatch(
      /this month's budget is spent \(\$[\d.]+ of \$0\): you can ask again from 1 \w+ \d{4} at 00:00 UTC, when it resets/,
    );
    expect(r.stdout).toContain('/position N'); // the session went on to the next line
    const oneShot = await run(['conversations', 'list'], { PARLEY_TOKEN: minted.stdout.trim() });
    expect(oneShot.code).toBe(0); // only posting is refused
    expect((await run(['token', '--user', user, '--budget', '-1'])).code).toBe(2);
  }, 60_000);

  it('replay prints who said what, the tool calls and the cost per turn; --json gives the events', async () => {
    const { body: conversation } = await api.req('POST', '/v1/conversations', { bookId });
    const posted = await api.req('POST', `/v1/conversations/${conversation.id}/messages`, { content: 'Who?' });
    await waitFor('the answer', async () =>
      (await events(conversation.id)).some(
        (e) => e.type === 'AssistantReplied' && e.data.turnId === posted.body.turnId,
      ),
    );
    const text = await run(['replay', conversation.id]);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${user}: Who?`);
    expect(text.stdout).toContain('agent ran search_book "caterpillar mushroom"');
    expect(text.stdout).toMatch(/agent: Alice met a Caterpillar sitting on a mushroom \[1\]\.\n\s+\[1\] CHAPTER/);
    expect(text.stdout).toMatch(/turn: 2 model calls, .*\$\d+\.\d{4}/);
    const json = await run(['replay', conversation.id, '--json']);
    const lines = json.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((e) => e.version)).toEqual(lines.map((_, i) => i + 1));
    expect(lines.map((e) => e.type)).toContain('ToolInvoked');
  }, 60_000);

  it("books add takes an EPUB, named after the title it states, with its table of contents' chapters", async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'parley-cli-'));
    try {
      const file = path.join(dir, 'saltmarsh.epub');
      writeFileSync(file, await epub3Book());
      const reader = { PARLEY_USER: `epub-${randomUUID()}` };
      const added = await run(['books', 'add', file], reader);
      expect(added).toMatchObject({ code: 0 });
      expect(added.stdout).toContain(`${EPUB3_FACTS.title} by ${EPUB3_FACTS.author}`);
      const id = /^([0-9a-f-]{36})\s/m.exec(added.stdout)![1];
      const shown = await run(['books', 'show', id], reader);
      for (const c of EPUB3_FACTS.chapters)
        expect(shown.stdout).toMatch(new RegExp(`^\\s+${c.index}\\s+${c.title}$`, 'm'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);

  it('says in one line, with an exit code, when the server is down, the token is wrong or a thing is gone', async () => {
    const down = await run(['books', 'list'], { PARLEY_URL: `http://127.0.0.1:${await freePort()}` });
    expect(down.code).toBe(3);
    expect(down.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^cannot reach the Parley API at http/)]);
    const badToken = await run(['books', 'list'], { PARLEY_TOKEN: 'not-a-token' });
    expect(badToken.code).toBe(4);
    expect(badToken.stderr.trim().split('\n')).toEqual([expect.stringMatching(/PARLEY_TOKEN was refused/)]);
    const gone = await run(['replay', randomUUID()]);
    expect(gone.code).toBe(5);
    expect(gone.stderr.trim().split('\n')).toEqual([expect.stringMatching(/not found/)]);
    const chatGone = await run(['chat', '--conversation', randomUUID()]);
    expect(chatGone.code).toBe(5);
    const usage = await run(['books', 'frobnicate']);
    expect(usage.code).toBe(2);
    for (const r of [down, badToken, gone, chatGone]) expect(r.stderr).not.toMatch(/\n\s+at /); // no stack
  }, 60_000);
});

/** As after a bare `npm start`: the offline scripted model, NODE_ENV=development. */
describe("terminal client against npm start's defaults (scripted model, e2e)", () => {
  let stack: Stack;

  beforeAll(async () => {
    stack = await startStack({ env: { NODE_ENV: 'development' } });
  }, 60_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('adds a book and answers a piped question with its sources', async () => {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PARLEY_URL: stack.base,
      AUTH_JWT_SECRET: TEST_JWT_SECRET,
      PARLEY_USER: `scripted-${randomUUID()}`,
      NO_COLOR: '1',
    };
    delete env.PARLEY_TOKEN;
    const cli = (args: string[], stdin = ''): Promise<Run> =>
      new Promise((resolve) => {
        const child = execFile(process.execPath, [CLI, ...args], { cwd: ROOT, env, timeout: 60_000 }, (err, o, e) =>
          resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout: o, stderr: e }),
        );
        child.stdin!.end(stdin);
      });
    const added = await cli(['books', 'add', 'data/books/alice.txt', '--title', 'Alice']);
    expect(added.code).toBe(0);
    const bookId = /^([0-9a-f-]{36})\s+Alice/m.exec(added.stdout)![1];
    const chat = await cli(['chat', bookId, '--new'], 'Who was sitting on the mushroom smoking a hookah?\n');
    expect(chat).toMatchObject({ code: 0, stderr: '' });
    expect(chat.stdout).toContain('Let me look that up in the book.');
    expect(chat.stdout).toMatch(/sources:\n\s+\[1\] CHAPTER/i);
  }, 120_000);
});
