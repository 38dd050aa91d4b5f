/**
 * What whole-book retrieval costs beside search (`npm run bench:whole-book`): for books of 30k,
 * 100k and 180k tokens, a conversation of 10 turns in `whole-book` mode and the same in `tools`
 * mode (one search of 5 passages a turn, then the answer), each request built by Parley's own
 * code (the AnthropicLlm adapter, bookDocuments, withBooks) and counted by the fake Messages API's
 * prompt cache (≈ 4 characters a token, the API's breakpoint and 20-block lookback rules). Prices:
 * the shipped table (LLM_PRICES over the defaults) for BENCH_MODEL (default claude-sonnet-5-5).
 * Then a reader moving forward (chapter 20 → 21 → 30 of 40) and the 1-hour cache TTL: when it pays.
 */
import {
  addUsage,
  AnthropicLlm,
  bookDocuments,
  priceTableWith,
  LlmMessage,
  LlmToolSpec,
  readerNote,
  WholeBookText,
  withBooks,
  zeroUsage,
} from '../libs/agent/src';
import { Usage } from '../libs/conversation/src';
import { FakeAnthropic } from '../test/support/fake-anthropic/fake-anthropic.server';

/** The shipped prices (no LLM_PRICES here). */
const { costUsd } = priceTableWith();

const MODEL = process.env.BENCH_MODEL ?? 'claude-sonnet-5-5';
const TURNS = 10;
const CHAPTERS = 40;
const PASSAGE_CHARS = 1_000;
const SYSTEM = 'You are Parley, a reading companion. '.repeat(40); // ≈ the size of the real system prompts
const SEARCH: LlmToolSpec = {
  name: 'search_book',
  description: 'Searches the book. '.repeat(30),
  inputSchema: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] },
};
const ANSWER = 'The passage says so, in the chapter the reader just read, with a quote or two of it. '.repeat(3);

/** A book of about `tokens` tokens in CHAPTERS chapters of 1,000-character passages. */
function syntheticBook(tokens: number, chapters = CHAPTERS): WholeBookText {
  const passages = Math.round((tokens * 4) / PASSAGE_CHARS);
  return {
    bookId: 'b',
    title: `A book of ${tokens / 1000}k tokens`,
    passages: Array.from({ length: passages }, (_, i) => {
      const chapterIndex = 1 + Math.floor((i * chapters) / passages);
      return {
        chunkId: `p${i}`,
        chapter: `Chapter ${chapterIndex}`,
        chapterIndex,
        section: null,
        page: null,
        text: `(${i}) ${'Words of the book, one after the other, as a novel has them. '.repeat(16)}`.slice(
          0,
          PASSAGE_CHARS,
        ),
      };
    }),
  };
}

const upTo = (book: WholeBookText, chapter: number): WholeBookText => ({
  ...book,
  passages: book.passages.filter((p) => p.chapterIndex <= chapter),
});

interface TurnUsage {
  usage: Usage;
  usd: number;
}

async function call(
  llm: AnthropicLlm,
  fake: FakeAnthropic,
  messages: LlmMessage[],
  tools: LlmToolSpec[],
  reply: string,
): Promise<Usage> {
  fake.enqueue({ content: [{ type: 'text', text: reply }] });
  const outcome = await llm.chatWithTools(messages, tools, { system: SYSTEM, prefixEnd: messages.length - 2 });
  if (outcome.kind !== 'answered') throw new Error('no answer');
  return outcome.result.usage;
}

/** 10 turns reading the book up to `chapter` (the reader moving on to `movesTo` from turn 6, when given). */
async function wholeBookTurns(fake: FakeAnthropic, book: WholeBookText, ttl?: '1h'): Promise<TurnUsage[]> {
  const llm = new AnthropicLlm({ model: MODEL, maxTokens: 1024, maxRetries: 0, apiKey: 'k', baseUrl: fake.url });
  const history: LlmMessage[] = [];
  const out: TurnUsage[] = [];
  const { documents } = bookDocuments([book], ttl);
  for (let t = 1; t <= TURNS; t++) {
    history.push({ role: 'user', content: [{ type: 'text', text: `Question ${t} about the book?` }] });
    const usage = await call(llm, fake, withBooks(history, documents, readerNote(null, undefined)), [], ANSWER);
    history.push({ role: 'assistant', content: [{ type: 'text', text: ANSWER }] });
    out.push({ usage, usd: costUsd(MODEL, usage) });
  }
  return out;
}

/** 10 turns of the tool-use loop: a search_book call, 5 passages back, the answer. */
async function toolsTurns(fake: FakeAnthropic, book: WholeBookText): Promise<TurnUsage[]> {
  const llm = new AnthropicLlm({ model: MODEL, maxTokens: 1024, maxRetries: 0, apiKey: 'k', baseUrl: fake.url });
  const history: LlmMessage[] = [];
  const out: TurnUsage[] = [];
  for (let t = 1; t <= TURNS; t++) {
    history.push({ role: 'user', content: [{ type: 'text', text: `Question ${t} about the book?` }] });
    fake.enqueue({ content: [{ type: 'tool_use', id: `toolu_${t}`, name: 'search_book', input: { query: `q${t}` } }] });
    const first = await llm.chatWithTools(history, [SEARCH], { system: SYSTEM, prefixEnd: history.length - 2 });
    if (first.kind !== 'answered') throw new Error('no answer');
    history.push({
      role: 'assistant',
      content: [{ type: 'tool_use', id: `toolu_${t}`, name: 'search_book', input: { query: `q${t}` } }],
    });
    const found = book.passages.slice(t * 5, t * 5 + 5).map((p, i) => `[${i + 1}] ${p.chapter}\n${p.text}`);
    history.push({
      role: 'user',
      content: [{ type: 'tool_result', toolUseId: `toolu_${t}`, content: found.join('\n\n'), isError: false }],
    });
    const second = await call(llm, fake, history, [SEARCH], ANSWER);
    history.push({ role: 'assistant', content: [{ type: 'text', text: ANSWER }] });
    const usage = addUsage(first.result.usage, second);
    out.push({ usage, usd: costUsd(MODEL, usage) });
  }
  return out;
}

const k = (n: number) => (n >= 10_000 ? `${Math.round(n / 1000)}k` : String(n));
const usd = (n: number) => `$${n.toFixed(4)}`;
const row = (label: string, t: TurnUsage) =>
  `| ${label} | ${k(t.usage.inputTokens)} | ${k(t.usage.cacheCreationInputTokens)} | ${k(t.usage.cacheReadInputTokens)} | ${usd(t.usd)} |`;

async function main(): Promise<void> {
  const fake = await FakeAnthropic.start();
  try {
    console.log(`Model ${MODEL}; ${TURNS} turns; tokens ≈ characters / 4 as the fake counts them.\n`);
    console.log('| book, mode, turn | input | cache write | cache read | USD |');
    console.log('| --- | ---: | ---: | ---: | ---: |');
    for (const tokens of [30_000, 100_000, 180_000]) {
      const book = syntheticBook(tokens);
      fake.reset();
      const whole = await wholeBookTurns(fake, book);
      fake.reset();
      const tools = await toolsTurns(fake, book);
      const sum = (ts: TurnUsage[]) => ts.reduce((n, t) => n + t.usd, 0);
      console.log(row(`${k(tokens)} whole-book, turn 1`, whole[0]));
      console.log(row(`${k(tokens)} whole-book, turn 10`, whole[9]));
      console.log(row(`${k(tokens)} tools, turn 1`, tools[0]));
      console.log(row(`${k(tokens)} tools, turn 10`, tools[9]));
      console.log(`| ${k(tokens)}: 10 turns in all | whole-book ${usd(sum(whole))} | tools ${usd(sum(tools))} | | |`);
    }

    // a reader moving forward: chapter 20, then 21, then 30 (of 40), in a 180k book
    const big = syntheticBook(180_000);
    fake.reset();
    const moves: string[] = [];
    let history: LlmMessage[] = [];
    const llm = new AnthropicLlm({ model: MODEL, maxTokens: 1024, maxRetries: 0, apiKey: 'k', baseUrl: fake.url });
    for (const chapter of [20, 21, 30]) {
      const { documents } = bookDocuments([upTo(big, chapter)]);
      history = [...history, { role: 'user', content: [{ type: 'text', text: `At chapter ${chapter}?` }] }];
      const usage = await call(llm, fake, withBooks(history, documents, readerNote(chapter, undefined)), [], ANSWER);
      history.push({ role: 'assistant', content: [{ type: 'text', text: ANSWER }] });
      const total = usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens;
      moves.push(
        `chapter ${chapter}: ${k(total)} prompt tokens, ${k(usage.cacheReadInputTokens)} read from the cache (${Math.round((100 * usage.cacheReadInputTokens) / total)} %), ${k(usage.cacheCreationInputTokens)} written`,
      );
    }
    console.log(`\nA reader moving forward in the 180k book (40 chapters):\n- ${moves.join('\n- ')}`);

    // the 1-hour TTL: its write costs 2× input instead of 1.25×; it pays when the 5-minute entry would expire
    const book = syntheticBook(100_000);
    fake.reset();
    const hour = await wholeBookTurns(fake, book, '1h');
    const written = hour[0].usage.cacheCreationInputTokens;
    // the API prices a 1-hour write at 2× input, a 5-minute one at 1.25×
    const input = costUsd(MODEL, { ...zeroUsage(), inputTokens: written });
    const read = costUsd(MODEL, { ...zeroUsage(), cacheReadInputTokens: written });
    console.log(
      `\n1-hour TTL, 100k book (${k(written)} tokens written): a 5-minute write ${usd(1.25 * input)}, a 1-hour write ` +
        `${usd(2 * input)}, a read ${usd(read)}. The hour costs ${usd(0.75 * input)} more once; each pause of more ` +
        `than 5 minutes (within the hour) it saves a rewrite, ${usd(1.25 * input - read)}.`,
    );
  } finally {
    await fake.close();
  }
}

void main().catch((e) => {
  console.error(e);
  process.exit(1);
});
