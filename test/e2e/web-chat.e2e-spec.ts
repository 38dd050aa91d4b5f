/**
 * The web chat page in a real browser: Debian's Chromium driven by playwright-core against the
 * built stack (api + worker from dist/, the fake Anthropic API as the model), one reader's
 * journey case after case on one page. Screenshots go to test-artifacts/web/ (git-ignored), at
 * desktop and phone width. web-scripted.e2e-spec.ts checks the page against `npm start`'s defaults.
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { type FakeReply, type RecordedRequest } from '../support/fake-anthropic/fake-anthropic.server';
import { questionOf } from '../support/fake-anthropic/questions';
import { tinyBookMarkdown } from '../support/factories/books';
import { startFlakyProxy } from '../support/flaky-proxy';
import { DEV_JWT_SECRET } from '@parley/config';
import { clientFor, tokenFor } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { waitFor } from '../support/wait-for';
import { launchChromium, SHOTS } from '../support/web-browser';

/** As `npm start` runs: development, no AUTH_JWT_SECRET, so the API uses (and mints with) the public development secret. */
const DEVELOPMENT = { NODE_ENV: 'development', AUTH_JWT_SECRET: '' };

const SLOW_ANSWER = Array.from({ length: 16 }, (_, i) => `Sentence ${i + 1} about the telescope.`).join(' ') + ' [1]';

/** Searches the book once, then answers citing [1]; a question with SLOW gets a long answer streamed slowly. */
function model(req: RecordedRequest): FakeReply {
  const last = req.body.messages[req.body.messages.length - 1];
  const hasResults = Array.isArray(last.content) && last.content.some((b: any) => b.type === 'tool_result');
  const q = questionOf(req);
  if (!hasResults && req.body.tools?.length) {
    return { content: [{ type: 'tool_use', name: 'search_book', input: { query: 'Marisol telescope' } }] };
  }
  if (q.includes('SLOW')) return { content: [{ type: 'text', text: SLOW_ANSWER }], delayMsPerChunk: 400 };
  return {
    content: [{ type: 'text', text: 'Marisol carried a brass telescope that was her grandmother’s [1].' }],
    delayMsPerChunk: 300,
  };
}

describe('web chat page (e2e, Chromium)', () => {
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  // registered before the stack: the browser closes before the stack stops
  beforeAll(async () => {
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (e) => errors.push(String(e)));
    page.on('dialog', (d) => void d.accept());
  });
  afterAll(() => browser?.close());
  const s = useFakeStack({ fake: { defaultResponder: model }, env: DEVELOPMENT, timeoutMs: 90_000 });

  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
  const userMessages = () => page.locator('#messages .msg.user');
  const answers = () => page.locator('#messages .msg.assistant');
  const conversationId = () => /#c=([0-9a-f-]{36})/.exec(page.url())?.[1] ?? '';
  const api = () => clientFor(s.stack.base, 'web-reader', { secret: DEV_JWT_SECRET });
  /** Drops a file on the upload zone as a drag and drop would (the spec compiles without the DOM library: `w`). */
  const drop = (name: string, text: string, type: string) =>
    page.evaluate(
      ([name, text, type]) => {
        const w = globalThis as any;
        const dt = new w.DataTransfer();
        dt.items.add(new w.File([text], name, { type }));
        w.document.getElementById('drop').dispatchEvent(new w.DragEvent('drop', { dataTransfer: dt, bubbles: true }));
      },
      [name, text, type],
    );

  afterEach(() => expect(errors).toEqual([]));

  it('serves the page at / without a token, with a CSP, and a development token endpoint', async () => {
    const res = await fetch(`${s.stack.base}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(await res.text()).toContain('<title>Parley</title>');
    expect((await fetch(`${s.stack.base}/web/app.js`)).status).toBe(200);
    expect((await fetch(`${s.stack.base}/web/..%2Fpackage.json`)).status).toBe(404);
    expect((await fetch(`${s.stack.base}/v1`)).status).toBe(404); // the page is at / only
    expect((await fetch(`${s.stack.base}/v1/books`)).status).toBe(401); // and the API still wants a token
    const minted = await fetch(`${s.stack.base}/v1/dev/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ userId: 'someone' }),
    });
    expect(minted.status).toBe(201);
    expect(((await minted.json()) as { token: string }).token).toMatch(/^ey/);
  });

  it('signs in with a development token and uploads a book (drag and drop, then the file picker)', async () => {
    await page.goto(s.stack.base);
    await page.getByRole('heading', { name: 'Sign in with a token' }).waitFor();
    await shot('desktop-signin');
    await page.getByLabel('User id').fill('web-reader');
    await page.getByRole('button', { name: 'Get a development token' }).click();
    await page.getByText('signed in as web-reader').waitFor();

    // a dropped file the API refuses: its problem detail shows
    await drop('notes.xyz', 'not a book', 'application/octet-stream');
    await page.locator('#upload-label', { hasText: 'Upload failed: cannot tell the format' }).waitFor();

    // a dropped book uploads with progress, then ingests to ready
    const book = tinyBookMarkdown();
    await drop('The Lighthouse Keeper.md', book, 'text/markdown');
    await page.locator('#upload-label', { hasText: 'is ready: 3 chapters.' }).waitFor({ timeout: 30_000 });
    await page.locator('#book-list .item[aria-pressed="true"]', { hasText: 'The Lighthouse Keeper' }).waitFor();

    await page.setInputFiles('#file-input', {
      name: 'second.txt',
      mimeType: 'text/plain',
      buffer: Buffer.from('CHAPTER I.\n\nA short second book about a lamp.\n'),
    });
    await page.locator('#upload-label', { hasText: 'second is ready' }).waitFor({ timeout: 30_000 });
    expect(await page.locator('#book-list li').count()).toBe(2);
    // the first book again, for the conversation
    await page.locator('#book-list .item', { hasText: 'The Lighthouse Keeper' }).click();
  }, 60_000);

  it('asks, shows the tool call collapsed, streams the reply and opens a cited passage', async () => {
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.locator('#chat-title', { hasText: 'About The Lighthouse Keeper' }).waitFor();
    await page.getByLabel('Your message').fill('What did Marisol carry?');
    await page.keyboard.press('Enter');

    await userMessages().first().waitFor();
    // the search shows as a collapsed tool call, then the answer streams in, word by word
    const tool = page.locator('#messages details.tool').first();
    await tool.waitFor();
    expect(await tool.evaluate((d) => (d as unknown as { open: boolean }).open)).toBe(false);
    await page.locator('#messages .msg.assistant.working .text').waitFor();
    const partial = await page.locator('#messages .msg.assistant.working .text').innerText();
    expect(partial.length).toBeGreaterThan(0);
    expect(partial).not.toContain('[1]');
    await page.locator('#messages .msg.assistant.done').waitFor({ timeout: 20_000 });
    expect(await answers().first().locator('.text').innerText()).toBe(
      'Marisol carried a brass telescope that was her grandmother’s [1].',
    );

    await page.locator('#announce', { hasText: 'Parley answered: Marisol carried' }).waitFor();
    await tool.locator('summary').click();
    await page.locator('.tool-result', { hasText: 'brass telescope' }).waitFor();

    // the citation opens its passage, with chapter
    await page.locator('#messages .text button.cite', { hasText: '[1]' }).click();
    await page.locator('#passage-where', { hasText: 'Chapter 1' }).waitFor();
    expect(await page.locator('#passage-text').innerText()).toContain('brass telescope');
    await shot('desktop-passage');
  }, 60_000);

  it('asks about a selected passage, and a reload mid-reply completes the reply once', async () => {
    // select two words of the passage and ask about them
    await page.evaluate(() => {
      const doc = (globalThis as any).document;
      const node = doc.getElementById('passage-text').firstChild;
      const at = node.data.indexOf('brass telescope');
      const range = doc.createRange();
      range.setStart(node, at);
      range.setEnd(node, at + 'brass telescope'.length);
      doc.getSelection().removeAllRanges();
      doc.getSelection().addRange(range);
    });
    await page.getByRole('button', { name: 'Ask about the selected words' }).click();
    await page.locator('#quote-text', { hasText: 'brass telescope' }).waitFor();
    await page.getByLabel('Your message').fill('SLOW Why this?');
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#messages .msg.user .selected', { hasText: 'brass telescope' }).waitFor();

    // reload while the answer streams
    await page.locator('#messages .msg.assistant.working .text').waitFor({ timeout: 20_000 });
    await shot('desktop-streaming');
    await page.reload();
    await page.locator('#messages .msg.assistant.working').waitFor();
    await page.locator('#messages .msg.assistant.done').nth(1).waitFor({ timeout: 30_000 });

    expect(await userMessages().count()).toBe(2);
    expect(await answers().count()).toBe(2);
    expect(await answers().nth(1).locator('.text').innerText()).toBe(SLOW_ANSWER);
    // nothing doubled: the page holds each event once, exactly what the server stored
    const id = conversationId();
    const stored = (await api().req('GET', `/v1/conversations/${id}/events`)).body.items as Array<{
      type: string;
      data: any;
    }>;
    expect(
      stored.find((e) => e.type === 'UserMessagePosted' && e.data.selectedText === 'brass telescope'),
    ).toBeTruthy();
    await page.getByRole('button', { name: 'Timeline' }).click();
    expect(await page.locator('#timeline-list li').count()).toBe(stored.length);
    await page.getByRole('button', { name: 'Close' }).first().click();
  }, 90_000);

  it('stops a reply', async () => {
    await page.getByLabel('Your message').fill('SLOW Tell me everything');
    await page.keyboard.press('Enter');
    await page.locator('#messages .msg.assistant.working .text').waitFor({ timeout: 20_000 });
    await page.getByRole('button', { name: 'Stop the answer' }).click();
    await page.locator('#messages .msg.assistant.cancelled', { hasText: 'The answer was stopped.' }).waitFor();
    await page.getByRole('button', { name: 'Stop the answer' }).waitFor({ state: 'hidden' });
  }, 60_000);

  it('resumes after a dropped connection (Last-Event-ID) without a reload, nothing doubled', async () => {
    const id = conversationId();
    const proxy = await startFlakyProxy(Number(new URL(s.stack.base).port));
    const flaky = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    flaky.on('pageerror', (e) => errors.push(String(e)));
    try {
      await flaky.goto(`${proxy.base}/#c=${id}`);
      await flaky.getByLabel('User id').fill('web-reader');
      await flaky.getByRole('button', { name: 'Get a development token' }).click();
      await flaky.locator('#stream-status', { hasText: 'live' }).waitFor();
      // "live" is the stream's open, before its replay of the stored events has arrived: count the
      // answers once the page holds every turn stored so far (one answer per posted message)
      const posted = (await api().req('GET', `/v1/conversations/${id}/events`)).body.items.filter(
        (e: { type: string }) => e.type === 'UserMessagePosted',
      ).length;
      await flaky.waitForFunction(
        (n) => (globalThis as any).document.querySelectorAll('#messages .msg.assistant:not(.working)').length === n,
        posted,
      );
      const answersBefore = await flaky.locator('#messages .msg.assistant').count();
      expect(answersBefore).toBe(posted);
      await flaky.evaluate(() => ((globalThis as any).notReloaded = true));

      await flaky.getByLabel('Your message').fill('SLOW And then?');
      await flaky.keyboard.press('Enter');
      await flaky.locator('#messages .msg.assistant.working .text').waitFor({ timeout: 20_000 });
      // cut twice, each time once more text came over the reconnected stream
      for (let cut = 0; cut < 2; cut++) {
        const shown = await flaky.locator('#messages .msg.assistant.working .text').innerText();
        proxy.cutAll();
        await flaky.waitForFunction((before) => {
          const text = (globalThis as any).document.querySelector('#messages .msg.assistant.working .text');
          return text && text.innerText.length > before.length;
        }, shown);
      }
      await flaky.waitForFunction(
        (n) => {
          const all = (globalThis as any).document.querySelectorAll('#messages .msg.assistant');
          return all.length === n && all[n - 1].classList.contains('done');
        },
        answersBefore + 1,
        { timeout: 30_000 },
      );

      expect(proxy.cuts).toBe(2);
      expect(await flaky.evaluate(() => (globalThis as any).notReloaded)).toBe(true);
      expect(await flaky.locator('#messages .msg.assistant').count()).toBe(answersBefore + 1);
      expect(await flaky.locator('#messages .msg.assistant .text').last().innerText()).toBe(SLOW_ANSWER);
      const stored = (await api().req('GET', `/v1/conversations/${id}/events`)).body.items as unknown[];
      await flaky.getByRole('button', { name: 'Timeline' }).click();
      expect(await flaky.locator('#timeline-list li').count()).toBe(stored.length);
    } finally {
      await flaky.close();
      await proxy.close();
    }
    // the first page followed the same turn live
    await page.locator('#messages .msg.assistant.done').nth(2).waitFor({ timeout: 10_000 });
  }, 90_000);

  it('sets the reading position and renames', async () => {
    await page.getByLabel('Spoiler guard').selectOption({ label: 'Up to Chapter 1: Arrival' });
    await page.locator('#messages .note', { hasText: 'Reading position: up to chapter 1' }).waitFor();
    await page.getByRole('button', { name: 'Rename' }).click();
    await page.getByLabel('New title').fill('Telescopes');
    await page.keyboard.press('Enter');
    await page.locator('#chat-title', { hasText: 'Telescopes' }).waitFor();
    await page.locator('#conversation-list .item', { hasText: 'Telescopes' }).waitFor({ timeout: 10_000 });
    await shot('desktop-chat');
  });

  it('travels back in time on the timeline and forks from there', async () => {
    const source = conversationId();
    await page.getByRole('button', { name: 'Timeline' }).click();
    // version 5: the first answer (started, posted, tool invoked, tool result, replied)
    await page.locator('#timeline-list button[data-version="5"]').click();
    await page.locator('#past-text', { hasText: 'version 5 of' }).waitFor();
    await page.locator('#past-text', { hasText: '“About The Lighthouse Keeper”' }).waitFor();
    expect(await userMessages().count()).toBe(1);
    expect(await page.getByLabel('Your message').isDisabled()).toBe(true);
    await shot('desktop-timeline');

    await page.getByRole('button', { name: 'Fork from this version' }).click();
    await page.waitForFunction((id) => !(globalThis as any).location.hash.includes(id), source);
    await page.locator('#messages .note', { hasText: 'Forked from another conversation at version 5' }).waitFor();
    await page.locator('#messages .msg.assistant.done').waitFor();
    expect(await userMessages().count()).toBe(1);
    expect(await page.locator('#chat-title').innerText()).toBe('About The Lighthouse Keeper');

    // fork at a message of the source too
    await page.goto(`${s.stack.base}/#c=${source}`);
    await page.locator('#chat-title', { hasText: 'Telescopes' }).waitFor();
    await page.getByRole('button', { name: 'Fork after this answer' }).first().click();
    await page.waitForFunction((id) => !(globalThis as any).location.hash.includes(id), source);
    await page.locator('#messages .note', { hasText: 'at version 5' }).waitFor();
  }, 60_000);

  it('deletes a conversation', async () => {
    const id = conversationId();
    // count from the read model once it lists the open conversation (the newest fork): the
    // sidebar, refreshed only on the page's own events, may not show a fork listed late yet
    const listed = async () =>
      (await api().api.GET('/v1/conversations', { params: { query: { limit: 100 } } })).data!.items.map((c) => c.id);
    await waitFor('the read model to list the open conversation', async () => (await listed()).includes(id));
    const before = (await listed()).length;
    await page.getByRole('button', { name: 'Delete' }).click();
    await page.locator('#toast', { hasText: 'deleted' }).waitFor();
    expect(await page.locator(`#conversation-list a[href="#c=${id}"]`).count()).toBe(0);
    await waitFor('the sidebar to list the rest', async () =>
      (await page.locator('#conversation-list li').count()) === before - 1 ? true : undefined,
    ).catch(() => undefined);
    expect(await page.locator('#conversation-list li').count()).toBe(before - 1);
    expect((await api().req('GET', `/v1/conversations/${id}`)).status).toBe(404);
  });

  it('fits a phone', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const menu = page.getByRole('button', { name: 'Menu' });
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await page.locator('#sidebar').waitFor({ state: 'visible' });
    await shot('phone-menu');
    await page.locator('#conversation-list .item', { hasText: 'Telescopes' }).first().click();
    await page.locator('#sidebar').waitFor({ state: 'hidden' });
    await page.locator('#chat-title', { hasText: 'Telescopes' }).waitFor();
    await shot('phone-chat');
    await page.locator('#messages .text button.cite').first().click();
    await page.locator('#passage').waitFor({ state: 'visible' });
    await shot('phone-passage');
    // Escape closes the panel and gives the focus back to the citation that opened it
    await page.keyboard.press('Escape');
    await page.locator('#passage').waitFor({ state: 'hidden' });
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.className)).toBe('cite');
    const overflow = await page.evaluate(() => {
      const w = globalThis as any;
      return w.document.documentElement.scrollWidth - w.innerWidth;
    });
    expect(overflow).toBeLessThanOrEqual(0);
  });

  it('tells a reader whose budget is spent when it resets, and keeps the question', async () => {
    // another browser context: this page's token stays as it is
    const spent = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    spent.on('pageerror', (e) => errors.push(String(e)));
    try {
      await spent.goto(s.stack.base);
      const token = tokenFor('web-reader', { secret: DEV_JWT_SECRET, claims: { parley_budget_usd_per_month: 0 } });
      await spent.getByLabel('Bearer token').fill(token);
      await spent.getByRole('button', { name: 'Sign in', exact: true }).click();
      await spent.getByText('signed in as web-reader').waitFor();
      await spent.locator('#conversation-list .item').first().click();
      await spent.locator('#chat-title').waitFor();
      await spent.getByLabel('Your message').fill('One more question?');
      await spent.keyboard.press('Enter');
      // what web-reader's questions above cost, of a budget of 0
      const toast = spent.locator('#toast', {
        hasText: /^This month's budget is spent \(\$[\d.]+ of \$0\)\./,
      });
      await toast.waitFor();
      const resets = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1));
      expect(await toast.innerText()).toMatch(/You can ask again from .+\.$/);
      expect(await toast.innerText()).toContain(String(resets.getFullYear()));
      expect(await spent.getByLabel('Your message').inputValue()).toBe('One more question?');
      await spent.screenshot({ path: path.join(SHOTS, 'desktop-budget-spent.png') });
    } finally {
      await spent.close();
    }
  }, 60_000);
});
