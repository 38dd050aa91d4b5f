/**
 * Tool approvals in the web page, in a real browser (Debian's Chromium driven by playwright-core)
 * against the built stack: an operator's MCP tool server whose `send_postcard` needs the reader's
 * approval, the fake Anthropic API calling it on a `CALL:` directive in the question. The page
 * shows the waiting call as a card in its answer; the reader approves (the tool runs once) or
 * declines with a reason (it never runs); an answer that lost the race is a toast and the card
 * follows the log; a call left unanswered is declined on expiry. Screenshots go to
 * test-artifacts/web/ (git-ignored).
 */
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { DEV_JWT_SECRET } from '@parley/config';
import { newBook } from '../support/factories/books';
import { forecastTool, postcardTool, TestToolServer } from '../support/mcp-tool-server';
import { clientFor } from '../support/stack';
import { useFakeStack } from '../support/use-stack';
import { launchChromium, SHOTS } from '../support/web-browser';

const READER = 'approving-reader';
/** long enough for a reader's click, short enough to watch a call expire */
const APPROVAL_TIMEOUT_MS = 20_000;
const QUESTION = 'Send Ann a card. CALL:travel__send_postcard {"to": "Ann", "message": "hi"}';

describe('web page: tool approvals (e2e, Chromium, an MCP tool server)', () => {
  let travel: TestToolServer;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];
  // registered before the stack: the browser and the tool server stop after it
  beforeAll(async () => {
    travel = await TestToolServer.start({ tools: [forecastTool, postcardTool] });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (e) => errors.push(String(e)));
  });
  afterAll(async () => {
    await browser?.close();
    await travel?.stop();
  });
  const s = useFakeStack({
    env: () => ({
      // as `npm start` runs: the page mints a development token
      NODE_ENV: 'development',
      AUTH_JWT_SECRET: '',
      MCP_TOOL_SERVERS: JSON.stringify({ travel: { url: travel.url, approval: ['send_postcard'] } }),
      APPROVAL_TIMEOUT_MS: String(APPROVAL_TIMEOUT_MS),
    }),
    timeoutMs: 90_000,
  });

  const api = () => clientFor(s.stack.base, READER, { secret: DEV_JWT_SECRET });
  const shot = (name: string) => page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: false });
  const conversationId = () => /#c=([0-9a-f-]{36})/.exec(page.url())?.[1] ?? '';
  const card = () => page.locator('#messages .msg.assistant .approval');
  const postcards = () => travel.callsOf('send_postcard');
  const events = async (id: string) =>
    (await api().req('GET', `/v1/conversations/${id}/events`)).body.items as Array<{ type: string; data: any }>;

  /** A new conversation about the book, the question asked in the page, and its card once the turn waits. */
  async function askInANewConversation(): Promise<string> {
    const before = conversationId();
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.waitForFunction((id) => {
      const hash: string = (globalThis as any).location.hash;
      return /^#c=[0-9a-f-]{36}$/.test(hash) && (!id || !hash.includes(id));
    }, before);
    await page.locator('#stream-status', { hasText: 'live' }).waitFor();
    await page.getByLabel('Your message').fill(QUESTION);
    await page.keyboard.press('Enter');
    await card().waitFor({ timeout: 30_000 });
    return conversationId();
  }

  afterEach(() => expect(errors).toEqual([]));

  it('signs in; the reader has a book', async () => {
    await newBook(api());
    await page.goto(s.stack.base);
    await page.getByLabel('User id').fill(READER);
    await page.getByRole('button', { name: 'Get a development token' }).click();
    await page.getByText(`signed in as ${READER}`).waitFor();
    await page.locator('#book-list .item', { hasText: 'The Lighthouse Keeper' }).click();
  }, 60_000);

  it('shows the waiting call with its tool, input and expiry; Approve runs the tool once and the answer comes', async () => {
    const id = await askInANewConversation();
    const asked = (await events(id)).find((e) => e.type === 'ToolApprovalRequested')!;
    expect(asked.data).toMatchObject({ tool: 'travel__send_postcard', input: { to: 'Ann', message: 'hi' } });

    const group = page.getByRole('group', { name: 'The agent asks to use travel__send_postcard with' });
    await group.waitFor();
    expect(JSON.parse(await card().locator('.approval-input').innerText())).toEqual({ to: 'Ann', message: 'hi' });
    expect(await card().locator('.approval-input').innerText()).toContain('\n  "to": "Ann"'); // pretty
    expect(await card().locator('time').getAttribute('datetime')).toBe(asked.data.expiresAt);
    expect(await card().innerText()).toMatch(/Answer by .+; unanswered, it is declined\./);
    await page.locator('#messages .msg.assistant.working .working', { hasText: 'waiting for your approval' }).waitFor();
    await page.locator('#announce', { hasText: 'The agent asks to use travel__send_postcard' }).waitFor();
    expect(postcards()).toBe(0);
    await shot('desktop-approval');

    await group.getByRole('button', { name: 'Approve', exact: true }).click();
    const answer = page.locator('#messages .msg.assistant.done');
    await answer.waitFor({ timeout: 30_000 });
    expect(await answer.locator('.text').innerText()).toContain('Postcard sent to Ann');
    expect(postcards()).toBe(1);
    expect(await card().locator('.approval-outcome').innerText()).toBe('Approved.');
    expect(await card().locator('button').count()).toBe(0);
    expect(await card().getAttribute('class')).toContain('approved');

    // the timeline has a line for the request and one for the answer
    await page.getByRole('button', { name: 'Timeline' }).click();
    await page
      .locator('#timeline-list .tl-desc', { hasText: 'asks to use travel__send_postcard {"to":"Ann"' })
      .waitFor();
    await page
      .locator('#timeline-list li', { hasText: 'ToolApprovalDecided' })
      .locator('.tl-desc', { hasText: /^approved$/ })
      .waitFor();
    await page.getByRole('button', { name: 'Close' }).first().click();
    const decided = (await events(id)).find((e) => e.type === 'ToolApprovalDecided')!;
    expect(decided.data).toMatchObject({ approved: true, by: 'reader' });
  }, 60_000);

  it('declines with a reason, by keyboard: the tool is never called, the answer comes and the card says declined', async () => {
    const id = await askInANewConversation();
    const reason = page.getByLabel('Reason for declining (optional)');
    await reason.focus();
    await page.keyboard.type('not today');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.textContent)).toBe('Decline');
    await page.keyboard.press('Enter');

    await page.locator('#messages .msg.assistant.done').waitFor({ timeout: 30_000 });
    expect(await card().locator('.approval-outcome').innerText()).toBe('Declined: not today');
    expect(await card().getAttribute('class')).toContain('declined');
    expect(await card().locator('button').count()).toBe(0);
    expect(postcards()).toBe(1); // still the approved one only
    // the focus stayed on the card, redrawn as the log moved on
    expect(await page.evaluate(() => (globalThis as any).document.activeElement.id)).toMatch(/^approval-/);
    const all = await events(id);
    expect(all.find((e) => e.type === 'ToolApprovalDecided')!.data).toMatchObject({
      approved: false,
      reason: 'not today',
      by: 'reader',
    });
    expect(all.find((e) => e.type === 'ToolResultRecorded')!.data).toMatchObject({ isError: true });
    await shot('desktop-approval-declined');
  }, 60_000);

  it('an answer that lost the race (409) is a toast, and the card follows the log', async () => {
    const id = await askInANewConversation();
    // the reader's answer is held while the same call is approved elsewhere (another tab, a phone)
    await page.route('**/approvals', async (route) => {
      const req = route.request();
      const elsewhere = await api().req('POST', new URL(req.url()).pathname, {
        toolCallId: (req.postDataJSON() as { toolCallId: string }).toolCallId,
        approved: true,
      });
      expect(elsewhere.status).toBe(202);
      await route.continue();
    });
    try {
      await card().getByRole('button', { name: 'Decline', exact: true }).click();
      await page.locator('#toast', { hasText: 'This tool call was answered already' }).waitFor();
    } finally {
      await page.unroute('**/approvals');
    }
    await page.locator('#messages .msg.assistant.done').waitFor({ timeout: 30_000 });
    expect(await card().locator('.approval-outcome').innerText()).toBe('Approved.');
    expect(postcards()).toBe(2);
    const decided = (await events(id)).filter((e) => e.type === 'ToolApprovalDecided');
    expect(decided).toHaveLength(1);
  }, 60_000);

  it(
    'a call left unanswered is declined when it expires: the card says no answer in time',
    async () => {
      const id = await askInANewConversation();
      await page.locator('#messages .msg.assistant.done').waitFor({ timeout: APPROVAL_TIMEOUT_MS + 30_000 });
      expect(await card().locator('.approval-outcome').innerText()).toBe('No answer in time: declined.');
      expect(await card().locator('button').count()).toBe(0);
      expect(postcards()).toBe(2);
      expect((await events(id)).find((e) => e.type === 'ToolApprovalDecided')!.data).toMatchObject({
        approved: false,
        by: 'timeout',
      });
      await page.getByRole('button', { name: 'Timeline' }).click();
      await page.locator('#timeline-list .tl-desc', { hasText: 'no answer in time: declined' }).waitFor();
    },
    APPROVAL_TIMEOUT_MS + 60_000,
  );
});
