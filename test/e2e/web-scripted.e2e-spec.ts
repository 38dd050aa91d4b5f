/**
 * The web chat page as a newcomer first sees it, after a bare `npm start`: Chromium driven by
 * playwright-core against the built stack with the offline scripted model. The journey with the
 * fake Anthropic API is web-chat.e2e-spec.ts.
 */
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { EPUB3_FACTS, epub3Book } from '../support/book-fixtures';
import { tinyBookMarkdown } from '../support/factories/books';
import { startStack, type Stack } from '../support/stack';
import { launchChromium, SHOTS } from '../support/web-browser';

/** As after a bare `npm start`: the offline scripted model, NODE_ENV=development, no AUTH_JWT_SECRET (the development secret). */
describe("web chat page against npm start's defaults (scripted model, e2e, Chromium)", () => {
  let stack: Stack;
  let browser: Browser;

  beforeAll(async () => {
    stack = await startStack({ env: { NODE_ENV: 'development', AUTH_JWT_SECRET: '' } });
    browser = await launchChromium();
  }, 90_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('signs in, uploads a book, asks and gets a cited answer', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    await page.goto(stack.base);
    await page.getByLabel('User id').fill('newcomer');
    await page.getByRole('button', { name: 'Get a development token' }).click();
    await page.getByText('signed in as newcomer').waitFor();
    await page.setInputFiles('#file-input', {
      name: 'The Lighthouse Keeper.md',
      mimeType: 'text/markdown',
      buffer: Buffer.from(tinyBookMarkdown()),
    });
    await page.locator('#upload-label', { hasText: 'is ready' }).waitFor({ timeout: 30_000 });
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.getByLabel('Your message').fill('What did Marisol carry up the hill?');
    await page.keyboard.press('Enter');
    const answer = page.locator('#messages .msg.assistant.done');
    await answer.waitFor({ timeout: 30_000 });
    expect(await answer.locator('.text').innerText()).toMatch(/\[1\]/);
    await answer.locator('.text button.cite', { hasText: '[1]' }).first().click();
    await page.locator('#passage-where', { hasText: 'Chapter' }).waitFor();
    await page.screenshot({ path: path.join(SHOTS, 'desktop-scripted.png') });
    expect(errors).toEqual([]);
  }, 90_000);

  it('offers EPUB, HTML and Word files in the picker, and reads an EPUB under the title it states', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    await page.goto(stack.base);
    await page.getByLabel('User id').fill('publisher-reader');
    await page.getByRole('button', { name: 'Get a development token' }).click();
    await page.getByText('signed in as publisher-reader').waitFor();
    const accept = (await page.locator('#file-input').getAttribute('accept')) ?? '';
    for (const kind of ['.epub', '.html', '.docx', 'application/epub+zip', 'text/html'])
      expect(accept.split(',')).toContain(kind);
    await page.setInputFiles('#file-input', {
      name: 'saltmarsh.epub',
      mimeType: 'application/epub+zip',
      buffer: await epub3Book(),
    });
    await page
      .locator('#upload-label', { hasText: `${EPUB3_FACTS.title} is ready: ${EPUB3_FACTS.chapters.length} chapters.` })
      .waitFor({ timeout: 30_000 });
  }, 90_000);
});
