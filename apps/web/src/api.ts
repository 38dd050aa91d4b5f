/**
 * The page's calls to the API, through the typed client (@parley/client, libs/api-client) where it
 * has the operation, its SSE streams included, and XMLHttpRequest for the upload (fetch reports no
 * upload progress).
 * Every failure becomes an ApiError whose message is the problem's `detail` (or `message`).
 */
import {
  createParleyClient,
  formatUsd,
  readBudgetExceeded,
  readProblem,
  type BookProgressStream,
  type ConversationStream,
  type ParleyClient,
  type Schemas,
  type StreamOptions,
} from '@parley/client';
import type { EventEnvelope } from './model';

export type Book = Schemas['BookDto'];
export type Chapter = Schemas['ChapterDto'];
/** what the sidebar shows of a listed conversation */
export type ConversationSummary = Pick<
  Schemas['ConversationSummaryDto'],
  'id' | 'bookId' | 'title' | 'version' | 'lastActivityAt'
>;
export type ConversationState = Schemas['ConversationDto'];

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code?: string,
  ) {
    super(message);
  }
}

/**
 * The error an answer's body stands for: its problem's `detail` (see readProblem) and `code`; a spent
 * budget says when, in the reader's own time, it resets.
 */
function errorOf(body: unknown, status: number): ApiError {
  const budget = readBudgetExceeded(body);
  if (budget) {
    const when = new Date(budget.resetsAt).toLocaleString(undefined, { dateStyle: 'long', timeStyle: 'short' });
    const spent = `${formatUsd(budget.spentUsd)} of ${formatUsd(budget.budgetUsd)}`;
    return new ApiError(
      status,
      `This month's budget is spent (${spent}). You can ask again from ${when}.`,
      'budget_exceeded',
    );
  }
  const { detail, code } = readProblem(body);
  const fallback = status === 0 ? 'the API cannot be reached' : `the request failed (HTTP ${status})`;
  return new ApiError(status, detail ?? fallback, code);
}

/** openapi-fetch's answer: the data (typed by the operation's document), or an ApiError from its problem. */
async function ok<D>(call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  let r: { data?: D; error?: unknown; response: Response };
  try {
    r = await call;
  } catch {
    throw new ApiError(0, 'the API cannot be reached');
  }
  if (!r.response.ok) throw errorOf(r.error, r.response.status);
  return r.data as D; // a 204 has no body: D is then never read
}

export class Api {
  private readonly client: ParleyClient;

  constructor(
    readonly baseUrl: string,
    private readonly token: () => string | undefined,
  ) {
    this.client = createParleyClient({ baseUrl, token });
  }

  /** POST /v1/dev/token: only a development API mints tokens (404 otherwise). */
  static async devToken(baseUrl: string, userId: string): Promise<string> {
    try {
      const minted = await ok(createParleyClient({ baseUrl }).POST('/v1/dev/token', { body: { userId } }));
      return minted.token;
    } catch (e) {
      if (e instanceof ApiError && e.status === 404) {
        throw new ApiError(404, 'development tokens are off: this API does not run with NODE_ENV=development');
      }
      throw e;
    }
  }

  /** The reader's own books and their tenant's catalogue (the newest 500). */
  books(): Promise<{ items: Book[] }> {
    return ok(this.client.GET('/v1/books', { params: { query: { limit: 500 } } }));
  }

  book(id: string): Promise<Book> {
    return ok(this.client.GET('/v1/books/{id}', { params: { path: { id } } }));
  }

  conversations(): Promise<{ items: ConversationSummary[] }> {
    return ok(this.client.GET('/v1/conversations', { params: { query: { limit: 100 } } }));
  }

  conversation(id: string, version?: number): Promise<ConversationState> {
    return ok(this.client.GET('/v1/conversations/{id}', { params: { path: { id }, query: { version } } }));
  }

  startConversation(bookId: string | undefined, title?: string): Promise<ConversationState> {
    return ok(this.client.POST('/v1/conversations', { body: { bookId, title } }));
  }

  update(id: string, change: { title?: string; readingPosition?: number | null }): Promise<ConversationState> {
    return ok(this.client.PATCH('/v1/conversations/{id}', { params: { path: { id } }, body: change }));
  }

  remove(id: string): Promise<void> {
    return ok(this.client.DELETE('/v1/conversations/{id}', { params: { path: { id } } }));
  }

  post(id: string, content: string, selectedText?: string): Promise<{ turnId: string; version: number }> {
    return ok(
      this.client.POST('/v1/conversations/{id}/messages', {
        params: { path: { id } },
        body: { content, ...(selectedText ? { selectedText } : {}) },
      }),
    );
  }

  cancel(id: string, turnId: string): Promise<{ cancelled: boolean }> {
    return ok(this.client.POST('/v1/conversations/{id}/turns/{turnId}/cancel', { params: { path: { id, turnId } } }));
  }

  /** The reader's answer to a tool call waiting for approval; 409 `approval_decided` when it was answered already. */
  approve(
    id: string,
    turnId: string,
    answer: { toolCallId: string; approved: boolean; reason?: string },
  ): Promise<Schemas['ToolApprovalResultDto']> {
    return ok(
      this.client.POST('/v1/conversations/{id}/turns/{turnId}/approvals', {
        params: { path: { id, turnId } },
        body: answer,
      }),
    );
  }

  fork(id: string, version: number): Promise<ConversationState> {
    return ok(this.client.POST('/v1/conversations/{id}/fork', { params: { path: { id } }, body: { version } }));
  }

  /** Every event of a conversation after `after`, page by page. */
  async events(id: string, after = 0): Promise<EventEnvelope[]> {
    const all: EventEnvelope[] = [];
    let cursor: number | undefined = after;
    while (cursor !== undefined) {
      const page: Schemas['EventPageDto'] = await ok(
        this.client.GET('/v1/conversations/{id}/events', { params: { path: { id }, query: { after: cursor } } }),
      );
      all.push(...page.items);
      cursor = page.nextCursor === null ? undefined : Number(page.nextCursor);
    }
    return all;
  }

  /** The conversation's SSE stream after `lastEventId`, resumed with Last-Event-ID after each drop (the client's). */
  stream(id: string, options: StreamOptions): ConversationStream {
    return this.client.streamConversation(id, options);
  }

  /** The book's reading progress over SSE, until it is ready or failed. */
  followBook(id: string): BookProgressStream {
    return this.client.followBook(id);
  }

  /** POST /v1/books as multipart, reporting upload progress (0..1); resolves with the accepted book. */
  upload(file: File, onProgress: (fraction: number) => void): Promise<Book> {
    return new Promise((resolve, reject) => {
      const xhr = new XMLHttpRequest();
      xhr.open('POST', `${this.baseUrl}/v1/books`);
      xhr.setRequestHeader('authorization', `Bearer ${this.token() ?? ''}`);
      xhr.responseType = 'json';
      xhr.upload.onprogress = (e) => {
        if (e.lengthComputable) onProgress(e.loaded / e.total);
      };
      xhr.onload = () => {
        if (xhr.status >= 200 && xhr.status < 300) resolve(xhr.response as Book);
        else reject(errorOf(xhr.response, xhr.status));
      };
      xhr.onerror = () => reject(new ApiError(0, 'the upload was cut off: the API cannot be reached'));
      const form = new FormData();
      form.append('file', file, file.name);
      xhr.send(form);
    });
  }
}
