import { Injectable, Logger } from '@nestjs/common';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolResult,
  CancelledNotificationSchema,
  McpError,
  ServerNotification,
  ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { BookQueries, BookSearch, MAX_SEARCH_K } from '@parley/books';
import { MessageView } from '@parley/read-models';
import { AuthUser } from '../auth/auth-user';
import { bookReaderOf } from '../books/book-permissions';
import { ConversationReads } from '../conversations/conversation-reads.service';
import { describe } from '../http/http-exception.filter';
import { RateLimits } from '../rate-limits/rate-limits';
import { AskRequest } from './ask-cancellations';
import { McpAsk } from './mcp-ask';
import { SEARCH_QUERY_MAX } from '../books/book.dto';
import { askText, booksText, conversationsText, searchText, transcript } from './mcp-text';

/** The server's name and version in the MCP handshake. */
export const MCP_SERVER_INFO = { name: 'parley', version: '1.0.0' };
/** A conversation's resource URI. */
export const conversationUri = (id: string) => `parley://conversations/${id}`;
/** The resource list shows the newest conversations; older ones stay reachable by URI and list_conversations. */
const LISTED_CONVERSATIONS = 100;
/** The messages a transcript holds at most (pages of 100). */
const TRANSCRIPT_MAX_PAGES = 20;

const uuid = z.uuid();
type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Who is calling, from which client session (the Mcp-Session-Id, '' when none), and how to drop the request unanswered. */
export interface McpCaller {
  user: AuthUser;
  sessionId: string;
  /** ends the request's response without an answer (a request its client cancelled gets none) */
  abandon: () => void;
}

/**
 * Parley as an MCP server, made for one HTTP request of one reader (/mcp is stateless): the tools
 * and resources call the use cases the HTTP controllers call, with the caller's user, so budget,
 * rate limits, reading position and isolation are the API's own. A use case's problem (404, 402,
 * 409, 429 …) comes back as a tool error naming its code, as docs/errors.md lists them: a tool
 * result with isError, the text `code: detail` and the problem's fields (retryAfter) as its
 * structuredContent; the call itself succeeded, so it is no JSON-RPC error.
 */
/** list_books lists as many as the web page and the CLI ask GET /v1/books for. */
const MAX_LISTED_BOOKS = 500;

@Injectable()
export class ParleyMcpServer {
  private readonly log = new Logger('Mcp');

  constructor(
    private readonly books: BookQueries,
    private readonly search: BookSearch,
    private readonly reads: ConversationReads,
    private readonly asks: McpAsk,
    private readonly rateLimits: RateLimits,
  ) {}

  build(caller: McpCaller): McpServer {
    const { user } = caller;
    const server = new McpServer(MCP_SERVER_INFO, {
      instructions:
        "Parley answers questions about the reader's books, citing passages. list_books gives book ids; " +
        'ask starts a conversation on a book (bookId) or continues one (conversationId) and returns the answer ' +
        'with its sources; search_book finds passages without asking the model.',
    });

    server.registerTool(
      'list_books',
      {
        title: 'List books',
        description:
          "The reader's books, newest first: id, title, author, status (only `ready` books can be searched " +
          'or asked about) and chapters.',
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      () =>
        this.tool(async () => {
          // the reader's own books and their tenant's catalogue, as GET /v1/books lists them
          const { items: books } = await this.books.list(bookReaderOf(user), { limit: MAX_LISTED_BOOKS });
          const items = books.map((b) => ({
            id: b.id,
            title: b.title,
            author: b.author,
            status: b.status,
            visibility: b.visibility,
            chapters: b.chapters.map((c) => ({ index: c.index, title: c.title })),
          }));
          return { text: booksText(books), data: { books: items } };
        }),
    );

    server.registerTool(
      'search_book',
      {
        title: 'Search a book',
        description:
          "Finds passages of a ready book, as the agent's own search does: each with its chapter, section, " +
          'page and text, best first.',
        inputSchema: {
          bookId: uuid.describe('the book, from list_books'),
          query: z.string().min(1).max(SEARCH_QUERY_MAX).describe('words or a question to look for'),
          k: z.number().int().min(1).max(MAX_SEARCH_K).optional().describe('how many passages (default 5)'),
        },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      ({ bookId, query, k }) =>
        this.tool(async () => {
          await this.rateLimits.consume('searches', user.id); // counted with GET /v1/books/{id}/search
          const { items } = await this.search.search(bookReaderOf(user), bookId, query, { k });
          const results = items.map((h) => ({
            chapter: h.chapter,
            chapterIndex: h.chapterIndex,
            section: h.section,
            page: h.page,
            passage: h.text,
            score: h.score,
            chunkId: h.chunkId,
          }));
          return { text: searchText(items), data: { results } };
        }),
    );

    server.registerTool(
      'ask',
      {
        title: 'Ask Parley',
        description:
          'Asks a question: a new conversation on `bookId`, or the next turn of `conversationId`. The agent ' +
          'searches the book (up to the conversation’s reading position) and answers citing passages [n]; ' +
          'progress notifications follow the turn, the answer comes with its sources. Cancelling the request ' +
          'cancels the turn.',
        inputSchema: {
          // no min(1): an empty question is refused by the ask itself, validation_failed as a blank one (docs/mcp.md)
          question: z.string().describe('the question'),
          bookId: uuid.optional().describe('start a new conversation on this book (from list_books)'),
          conversationId: uuid.optional().describe('continue this conversation (from ask or list_conversations)'),
        },
        annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
      },
      (args, extra) =>
        this.tool(async () => {
          const request = askRequest(caller, extra);
          const outcome = await this.asks.ask(user, args, request, {
            progress: progressReporter(extra),
            signal: extra.signal,
          });
          // the client that cancelled this request gets no answer to it (MCP: "SHOULD NOT respond")
          if (outcome.status === 'cancelled' && (await this.asks.cancelledByClient(request))) caller.abandon();
          return { text: askText(outcome), data: outcome, isError: outcome.status !== 'answered' };
        }),
    );

    server.registerTool(
      'list_conversations',
      {
        title: 'List conversations',
        description: "The reader's conversations, newest activity first, a page at a time.",
        inputSchema: {
          bookId: uuid.optional().describe('only the conversations on this book'),
          limit: z.number().int().min(1).max(100).optional().describe('how many (default 20)'),
          cursor: z.string().optional().describe('nextCursor of the previous page'),
        },
        annotations: { readOnlyHint: true, openWorldHint: false },
      },
      (args) =>
        this.tool(async () => {
          const page = await this.reads.list(user.id, args);
          const conversations = page.items.map((c) => ({ ...c, uri: conversationUri(c.id) }));
          return {
            text: conversationsText(page.items, page.nextCursor),
            data: { conversations, nextCursor: page.nextCursor },
          };
        }),
    );

    server.registerResource(
      'conversation',
      new ResourceTemplate('parley://conversations/{conversationId}', {
        list: async () => {
          const page = await this.reads.list(user.id, { limit: LISTED_CONVERSATIONS });
          return {
            resources: page.items.map((c) => ({
              uri: conversationUri(c.id),
              name: c.title ?? `Conversation ${c.id}`,
              description: `${c.messageCount} messages, last active ${c.lastActivityAt}`,
              mimeType: 'text/markdown',
            })),
          };
        },
      }),
      {
        title: 'Conversation',
        description: 'A conversation with Parley as Markdown: each question and answer with its sources.',
        mimeType: 'text/markdown',
      },
      async (uri, { conversationId }) => {
        const id = String(conversationId);
        if (!uuid.safeParse(id).success) throw notFound(uri);
        try {
          const view = await this.reads.view(user.id, id);
          return {
            contents: [
              { uri: uri.href, mimeType: 'text/markdown', text: transcript(view, await this.messages(user.id, id)) },
            ],
          };
        } catch (e) {
          if (describe(e).code === 'conversation_not_found') throw notFound(uri);
          throw e;
        }
      },
    );

    // the ask a client cancels was made in an earlier HTTP request, maybe to another replica
    server.server.setNotificationHandler(CancelledNotificationSchema, async ({ params }) => {
      if (params.requestId === undefined) return;
      const request = { userId: user.id, sessionId: caller.sessionId, requestId: params.requestId };
      await this.asks
        .cancel(user, request)
        .catch((e: unknown) => this.log.warn(`cancel of an ask failed: ${String(e)}`));
    });
    return server;
  }

  /** The conversation's messages, oldest first, as far as a transcript shows them. */
  private async messages(userId: string, conversationId: string): Promise<MessageView[]> {
    const all: MessageView[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < TRANSCRIPT_MAX_PAGES; page++) {
      const got = await this.reads.messages(userId, conversationId, { limit: 100, cursor });
      all.push(...got.items);
      if (!got.nextCursor) break;
      cursor = got.nextCursor;
    }
    return all;
  }

  /** A tool's answer: its text and structured data, or the problem a use case raised as a tool error. */
  private async tool(
    run: () => Promise<{ text: string; data: Record<string, unknown>; isError?: boolean }>,
  ): Promise<CallToolResult> {
    try {
      const { text, data, isError } = await run();
      return { content: [{ type: 'text', text }], structuredContent: data, ...(isError ? { isError } : {}) };
    } catch (e) {
      const { code, detail, extras } = describe(e);
      if (code === 'internal_error') this.log.error(e instanceof Error ? e.stack : String(e));
      return {
        isError: true,
        content: [{ type: 'text', text: `${code}: ${detail}` }],
        structuredContent: { code, detail, ...extras },
      };
    }
  }
}

function askRequest(caller: McpCaller, extra: Extra): AskRequest {
  return { userId: caller.user.id, sessionId: caller.sessionId, requestId: extra.requestId };
}

/** Sends each line as a progress notification, when the client asked for them (a progressToken). */
function progressReporter(extra: Extra): (message: string) => void {
  const token = extra._meta?.progressToken;
  let progress = 0;
  return (message) => {
    if (token === undefined || extra.signal.aborted) return;
    void extra
      .sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: ++progress, message },
      })
      .catch(() => undefined); // the client left: the turn goes on without it
  };
}

/** MCP's code for an unknown resource (the spec's "Resource not found", -32002). */
const RESOURCE_NOT_FOUND = -32002;

function notFound(uri: URL): McpError {
  return new McpError(RESOURCE_NOT_FOUND, `Resource not found: ${uri.href}`, { uri: uri.href });
}
