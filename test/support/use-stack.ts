/**
 * A suite's running service as one fixture: called in a `describe`, it starts the processes in a
 * beforeAll and stops them in an afterAll, and hands back getters for its parts (they exist once
 * the beforeAll has run: read them in tests and hooks, not in the describe body). Jest's alone
 * (it registers hooks), so the build that bench/ runs from leaves it out (tsconfig.build.json).
 */
import { randomUUID } from 'node:crypto';
import { conversationHelpers } from './conversation-helpers';
import { FakeAnthropic, FakeAnthropicOptions } from './fake-anthropic/fake-anthropic.server';
import { newBook } from './factories/books';
import { Client, clientFor, fakeAnthropicEnv, startStack, Stack } from './stack';

export interface FakeStackOptions {
  /** the fake Messages API's options: its responder, batches held until the test ends them */
  fake?: FakeAnthropicOptions;
  apis?: number;
  workers?: number;
  /** the processes' env on top of the fake's; a function is read at start, after the suite's earlier beforeAll */
  env?: Record<string, string> | (() => Record<string, string>);
  /** how long starting may take */
  timeoutMs?: number;
}

/** The fake Messages API and the stack whose workers call it. */
export interface FakeStack {
  readonly fake: FakeAnthropic;
  readonly stack: Stack;
}

/** A FakeStack with a reader who has a book, and the reader's conversation helpers. */
export interface ReaderStack extends FakeStack, ReturnType<typeof conversationHelpers> {
  readonly alice: Client;
  readonly bookId: string;
}

const START_TIMEOUT_MS = 60_000;

/** The fake Messages API and a stack pointed at it, for the enclosing describe. */
export function useFakeStack(opts: FakeStackOptions = {}): FakeStack {
  let fake: FakeAnthropic | undefined;
  let stack: Stack | undefined;
  beforeAll(async () => {
    fake = await FakeAnthropic.start(opts.fake);
    const env = typeof opts.env === 'function' ? opts.env() : opts.env;
    stack = await startStack({
      apis: opts.apis,
      workers: opts.workers,
      env: { ...fakeAnthropicEnv(fake.url), ...env },
    });
  }, opts.timeoutMs ?? START_TIMEOUT_MS);
  afterAll(async () => {
    await stack?.stop();
    await fake?.close();
  });
  return {
    get fake() {
      return started('fake', fake);
    },
    get stack() {
      return started('stack', stack);
    },
  };
}

/** useFakeStack, and a reader (`reader-<uuid>`) with the tiny book uploaded and ready. */
export function useReaderStack(opts: FakeStackOptions = {}): ReaderStack {
  const service = useFakeStack(opts);
  let alice: Client | undefined;
  let bookId: string | undefined;
  beforeAll(async () => {
    alice = clientFor(service.stack.base, `reader-${randomUUID()}`);
    bookId = (await newBook(alice)).id;
  }, opts.timeoutMs ?? START_TIMEOUT_MS);
  return {
    get fake() {
      return service.fake;
    },
    get stack() {
      return service.stack;
    },
    get alice() {
      return started('alice', alice);
    },
    get bookId() {
      return started('bookId', bookId);
    },
    ...conversationHelpers(
      () => started('alice', alice),
      () => bookId,
    ),
  };
}

function started<T>(what: string, value: T | undefined): T {
  if (value === undefined) throw new Error(`${what} is not started: read it in a test or hook, after the beforeAll`);
  return value;
}
