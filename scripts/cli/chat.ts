/**
 * `chat [<bookId>] [--conversation <id>] [--new] [--verbose] [--position <chapter>]`: picks or
 * starts a conversation, then reads questions and streams the answers. Only the HTTP API and its
 * SSE stream are used: the stream is opened once per conversation and every turn is read from it.
 */
import type { Api } from './api';
import { CliError, EXIT } from './errors';
import { dim, bold, eventLines, oneLine, positionLabel, red } from './format';
import { pick } from './pick';
import {
  allEvents,
  cancelTurn,
  forkConversation,
  getBook,
  getConversation,
  listBooks,
  listConversations,
  postMessage,
  startConversation,
  updateConversation,
} from './resources';
import { followConversation, type Follower } from './sse-follow';
import type { Terminal } from './terminal';
import { TurnView } from './turn-view';
import type { Conversation, EventEnvelope, TextDelta } from './types';

export interface ChatOptions {
  bookId?: string;
  conversationId?: string;
  new?: boolean;
  verbose?: boolean;
  /** a chapter number, or null for the whole book; undefined leaves the conversation's as it is */
  position?: number | null;
}

/** How long to wait for the stream to confirm a cancel before giving the prompt back. */
const CANCEL_WAIT_MS = 5_000;
/** Items kept while a post is on its way: the stream may bring its turn before the 202 does. */
const EARLY_ITEMS = 1_000;

const HELP = [
  'type a question and press Enter; the answer streams in, then its sources',
  '  /position N     let the agent search chapters up to N (/position all: the whole book)',
  '  /fork           continue in a copy of this conversation (this one stays as it is)',
  '  /history        the conversation so far',
  '  /help           this text',
  '  quit, exit, Ctrl-D or Ctrl-C at the prompt: leave',
  '  Ctrl-C while an answer streams: cancel it',
].join('\n');

export async function chat(api: Api, term: Terminal, opts: ChatOptions): Promise<number> {
  const chosen = await chooseConversation(api, term, opts);
  if (!chosen) return EXIT.ok;
  return new ChatSession(api, term, chosen, Boolean(opts.verbose)).run();
}

/** --conversation, or a book (given or picked) and then --new or a pick among its conversations. */
async function chooseConversation(api: Api, term: Terminal, opts: ChatOptions): Promise<Conversation | null> {
  let conversation: Conversation | undefined;
  if (opts.conversationId) {
    conversation = await getConversation(api, opts.conversationId);
  } else {
    const bookId = opts.bookId ?? (await pickBook(api, term));
    if (!bookId) return null;
    const book = await getBook(api, bookId);
    if (book.status && book.status !== 'ready') {
      throw new CliError(
        `"${book.title}" is ${book.status}: chat once it is ready (books show ${book.id})`,
        EXIT.refused,
      );
    }
    if (!opts.new) {
      const { items } = await listConversations(api, bookId, 20);
      if (items.length > 0) {
        const labels = [
          'a new conversation',
          ...items.map(
            (c) =>
              `${c.title ?? dim('(untitled)')} ${dim(`· ${c.messageCount ?? 0} messages · ${positionLabel(c.readingPosition)} · ${c.id}`)}`,
          ),
        ];
        const n = await pick(term, `Conversations about "${book.title}":`, labels, 0);
        if (n === null) return null;
        if (n > 0) conversation = await getConversation(api, items[n - 1].id);
      }
    }
    conversation ??= await startConversation(api, {
      bookId,
      ...(opts.position !== undefined ? { readingPosition: opts.position } : {}),
    });
  }
  if (opts.position !== undefined && conversation.readingPosition !== opts.position) {
    conversation = await updateConversation(api, conversation.id, { readingPosition: opts.position });
  }
  return conversation;
}

async function pickBook(api: Api, term: Terminal): Promise<string | null> {
  const { items } = await listBooks(api);
  const ready = items.filter((b) => !b.status || b.status === 'ready');
  if (ready.length === 0) {
    throw new CliError(
      items.length
        ? 'no book is ready yet (books list shows their status)'
        : 'no books yet: npm run cli -- books add <file>',
      EXIT.notFound,
    );
  }
  const labels = ready.map((b) => `${b.title}${b.author ? ` by ${b.author}` : ''} ${dim(b.id)}`);
  const n = await pick(term, 'Your books:', labels);
  return n === null ? null : ready[n].id;
}

type Early = { event: EventEnvelope } | { delta: TextDelta };

class ChatSession {
  private follower!: Follower;
  private view?: TurnView;
  private early: Early[] | null = null;
  private turnEnded?: () => void;
  private fatal?: CliError;
  private leave?: (code: number) => void;

  constructor(
    private readonly api: Api,
    private readonly term: Terminal,
    private conversation: Conversation,
    private readonly verbose: boolean,
  ) {}

  async run(): Promise<number> {
    await this.follow();
    await this.greet();
    // a fatal stream error (the conversation deleted elsewhere) ends the session even at the prompt
    const left = new Promise<number>((resolve) => (this.leave = resolve));
    const loop = this.loop();
    const code = await Promise.race([loop, left]);
    this.follower.close();
    return code;
  }

  /** The book, the conversation and how far the agent may read: what the answers depend on. */
  private async greet(): Promise<void> {
    const c = this.conversation;
    const book = c.bookId ? await getBook(this.api, c.bookId).catch(() => undefined) : undefined;
    const title = c.title ? `"${c.title}"` : '(untitled)';
    this.say(`${bold(book?.title ?? 'No book')} · conversation ${c.id} ${dim(title)}`);
    this.say(dim(`reading position: ${positionLabel(c.readingPosition)} · /help for commands`));
  }

  private async loop(): Promise<number> {
    for (;;) {
      const line = await this.term.ask(`${bold('you>')} `);
      if (this.ended()) return this.ended()!;
      if (line === null) return EXIT.ok;
      const text = line.trim();
      if (!text) continue;
      if (text === 'quit' || text === 'exit') return EXIT.ok;
      try {
        if (text.startsWith('/')) await this.command(text);
        else await this.ask(text);
      } catch (e) {
        if (!(e instanceof CliError)) throw e;
        this.say(red(e.message)); // a refused request or a server gone for a moment: keep the session
      }
      if (this.ended()) return this.ended()!;
    }
  }

  /** the exit code once the stream said the session cannot go on */
  private ended(): number | undefined {
    return this.fatal?.exitCode;
  }

  private async follow(): Promise<void> {
    const id = this.conversation.id;
    this.follower = followConversation(this.api, id, this.conversation.version, {
      onEvent: (e) => this.onEvent(e),
      onDelta: (d) => this.onDelta(d),
      onLost: () => this.say(dim('(connection lost; reconnecting…)')),
      onBack: () => this.say(dim('(reconnected)')),
      onFatal: (e) => this.die(e),
    });
    await this.follower.opened;
  }

  private onEvent(e: EventEnvelope): void {
    if (e.type === 'ReadingPositionChanged') {
      this.conversation.readingPosition = (e.data.readingPosition as number | null) ?? null;
    }
    if (e.type === 'ConversationDeleted' || e.type === 'ConversationErased') {
      return this.die(new CliError('this conversation was deleted', EXIT.notFound));
    }
    if (this.early) this.keep({ event: e });
    else if (this.view?.event(e)) this.turnEnded?.();
  }

  private onDelta(d: TextDelta): void {
    if (this.early) this.keep({ delta: d });
    else this.view?.delta(d);
  }

  private keep(item: Early): void {
    this.early!.push(item);
    if (this.early!.length > EARLY_ITEMS) this.early!.shift();
  }

  private die(e: CliError): void {
    this.fatal = e;
    this.say(red(e.message));
    this.turnEnded?.();
    this.leave?.(e.exitCode);
  }

  /**
   * Posts a question and shows its turn until it ends. Ctrl-C cancels it, also while the post is
   * on its way (the cancel follows as soon as the turn has an id); a second Ctrl-C stops waiting.
   */
  private async ask(content: string): Promise<void> {
    this.early = [];
    let view: TurnView | undefined;
    let turnId: string | undefined;
    let interrupted = false;
    let giveUp: () => void = () => undefined;
    const stopWaiting = new Promise<void>((resolve) => (giveUp = resolve));
    const cancel = (id: string) =>
      cancelTurn(this.api, this.conversation.id, id).catch((e: Error) => this.say(red(e.message)));
    const release = this.term.whileBusy(() => {
      if (interrupted) return giveUp();
      interrupted = true;
      view?.mute();
      this.term.write(dim(' ^C cancelling…'));
      if (turnId) void cancel(turnId);
      setTimeout(giveUp, CANCEL_WAIT_MS).unref();
    });
    try {
      try {
        turnId = (await postMessage(this.api, this.conversation.id, content)).turnId;
      } catch (e) {
        this.early = null;
        throw e;
      }
      view = new TurnView(turnId, (s) => this.term.write(s), this.verbose);
      if (interrupted) {
        view.mute();
        void cancel(turnId);
      }
      const ended = new Promise<void>((resolve) => (this.turnEnded = resolve));
      // what the stream brought before the 202 (it can be quicker) is replayed into the view
      const early = this.early ?? [];
      this.early = null;
      this.view = view;
      for (const item of early) {
        if ('delta' in item) view.delta(item.delta);
        else if (view.event(item.event)) this.turnEnded?.();
      }
      await Promise.race([ended, stopWaiting]);
      if (!view.ended) this.say(dim('(stopped waiting for this answer)'));
    } finally {
      release();
      this.view = undefined;
      this.turnEnded = undefined;
    }
  }

  private async command(text: string): Promise<void> {
    const [name, ...args] = text.split(/\s+/);
    switch (name) {
      case '/help':
        return this.say(HELP);
      case '/position': {
        const arg = args[0];
        const position = arg === 'all' || arg === 'none' ? null : Number(arg);
        if (position !== null && (!Number.isInteger(position) || position < 0)) {
          return this.say('usage: /position <chapter number>, or /position all');
        }
        this.conversation = await updateConversation(this.api, this.conversation.id, { readingPosition: position });
        return this.say(dim(`reading position: ${positionLabel(this.conversation.readingPosition)}`));
      }
      case '/fork': {
        const version = this.follower.lastVersion();
        const fork = await forkConversation(this.api, this.conversation.id, version);
        this.follower.close();
        this.conversation = fork;
        await this.follow();
        return this.say(dim(`forked at #${version}: now in conversation ${fork.id} (the old one is unchanged)`));
      }
      case '/history': {
        const numbers = new Map<string, number>();
        const events = await allEvents(this.api, this.conversation.id);
        for (const e of events) for (const l of eventLines(e, numbers)) this.term.write(l + '\n');
        return;
      }
      default:
        return this.say(`unknown command ${oneLine(name, 20)}: /help lists them`);
    }
  }

  private say(text: string): void {
    this.term.write(text + '\n');
  }
}
