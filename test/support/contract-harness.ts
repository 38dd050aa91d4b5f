import { randomUUID } from 'node:crypto';
import { createParleyClient, ParleyClient } from '@parley/client';
import { tinyBookMarkdown } from './factories/books';
import { PrismProxy, servedDocument, startPrism, Violation, violationsOf } from './prism';
import { clientFor, Client, startStack, Stack } from './stack';

/**
 * The contract suite's stack, Prism proxy and record of every call (test/e2e/contract.e2e-spec.ts):
 * the scenarios make calls through it, the verdict judges all of them at the end.
 */

export const RATE_LIMIT = 8; // posts a minute per user: every user below posts less often, but eve

/** What one call was meant to be. */
export interface Intent {
  label: string;
  /** the statuses the API should answer */
  expect: number[];
  /**
   * `valid`: a request the document must accept (no request violation);
   * `schema`: a mistake the document can describe, so Prism must see a request violation too;
   * `opaque`: a mistake no schema can show (a bad signature, an unknown id, a cursor's content).
   */
  kind: 'valid' | 'schema' | 'opaque';
  /**
   * for `schema` mistakes, where Prism's request violation must be (a location prefix such as
   * `request.body`, or `security` for a missing token), so that another violation of the same
   * request (a header the document wrongly requires) does not pass for it
   */
  where?: string;
}

export interface Call extends Intent {
  method: string;
  url: string;
  /** METHOD /template of the document's operation, when one matches */
  operation?: string;
  via: 'prism' | 'direct';
  status: number;
  contentType: string;
  headers: Record<string, string>;
  text: string;
  body: any;
  violations: Violation[];
}

export interface Departure {
  call: Call;
  what: string;
}

export interface Operation {
  key: string;
  method: string;
  template: string;
  regex: RegExp;
  op: any;
}

export const bookJson = (title = 'The Lighthouse Keeper') => ({
  title,
  author: 'A. Tester',
  format: 'markdown',
  content: tinyBookMarkdown(),
});

export class ContractHarness {
  stack!: Stack;
  prism!: PrismProxy;
  doc: any;
  operations: Operation[] = [];
  readonly calls: Call[] = [];
  /** calls made straight to the API, checked by Prism's validator before the verdict */
  readonly directExchanges: Array<{
    call: Call;
    request: { method: string; url: string };
    response: { status: number; headers: Headers; body: unknown };
  }> = [];

  // users: each one's posts stay under the rate limit, but `eve`'s, who exceeds it
  alice!: Client;
  bob!: Client;
  carol!: Client;
  eve!: Client;
  private api!: ParleyClient;
  private pending: Intent | undefined;

  // ids shared by the scenarios
  bookId!: string; // ready once the worker runs
  spareBookId!: string; // uploaded as a multipart file, deleted at the end
  pendingConversation!: string;
  pendingTurn!: string;

  async start(): Promise<void> {
    // no worker at first: books stay `ingesting` and turns stay running until the worker starts,
    // which makes book_not_ready, book_ingest_busy and turn_in_progress deterministic
    this.stack = await startStack({
      apis: 1,
      workers: 0,
      env: { RATE_LIMIT_POSTS_PER_MIN: String(RATE_LIMIT), LLM_PROVIDER: 'scripted' },
    });
    this.doc = await servedDocument(this.stack.base);
    this.prism = await startPrism(this.doc, this.stack.base);
    this.operations = operationsOf(this.doc);
    this.alice = clientFor(this.prism.base, `alice-${randomUUID()}`);
    this.bob = clientFor(this.prism.base, `bob-${randomUUID()}`);
    this.carol = clientFor(this.prism.base, `carol-${randomUUID()}`);
    this.eve = clientFor(this.prism.base, `eve-${randomUUID()}`);
    this.api = createParleyClient({
      baseUrl: this.prism.base,
      token: this.alice.token,
      fetch: (info, init) => this.recordingFetch(info, init),
    });
  }

  async stop(): Promise<void> {
    await this.prism?.stop();
    await this.stack?.stop();
  }

  private operationOf(method: string, url: string) {
    const pathname = new URL(url, 'http://x').pathname;
    return this.operations.find((o) => o.method === method && o.regex.test(pathname))?.key;
  }

  private async record(
    intent: Intent,
    method: string,
    url: string,
    r: Response,
    via: Call['via'],
    violations?: Violation[],
  ): Promise<Call> {
    const text = await r.text();
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = undefined;
    }
    const call: Call = {
      ...intent,
      method,
      url,
      operation: this.operationOf(method, url),
      via,
      status: r.status,
      contentType: r.headers.get('content-type') ?? '',
      headers: Object.fromEntries(r.headers.entries()),
      text,
      body,
      violations: violations ?? violationsOf(r.headers),
    };
    this.calls.push(call);
    return call;
  }

  /** The fetch the generated client uses: through Prism, recorded under the intent set by `typed`. */
  private async recordingFetch(info: string | URL | Request, init?: RequestInit): Promise<Response> {
    const input = new Request(info, init);
    const intent = this.pending ?? { label: 'typed client call', expect: [200], kind: 'valid' };
    this.pending = undefined;
    const r = await fetch(input);
    const url = new URL(input.url);
    await this.record(intent, input.method, url.pathname + url.search, r.clone(), 'prism');
    return r;
  }

  /** A well-formed call made with the generated client; answers the recorded call. */
  async typed(label: string, expect: number | number[], run: (c: ParleyClient) => Promise<unknown>) {
    this.pending = { label, expect: [expect].flat(), kind: 'valid' };
    await run(this.api);
    return this.calls[this.calls.length - 1];
  }

  /** A raw request through Prism: for mistakes, other users and what the typed client cannot send. */
  async send(
    intent: { label: string; expect: number | number[]; kind?: Intent['kind']; where?: string },
    method: string,
    url: string,
    opts: { as?: Client | null; token?: string; body?: unknown; headers?: Record<string, string> } = {},
  ): Promise<Call> {
    const headers: Record<string, string> = {};
    const token = opts.token ?? (opts.as === null ? undefined : (opts.as ?? this.alice).token);
    if (token) headers.authorization = `Bearer ${token}`;
    let body: RequestInit['body'];
    if (opts.body instanceof FormData) body = opts.body;
    else if (typeof opts.body === 'string') {
      body = opts.body;
      headers['content-type'] = 'application/json';
    } else if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] = 'application/json';
    }
    Object.assign(headers, opts.headers);
    const r = await fetch(this.prism.base + url, { method, headers, body, signal: AbortSignal.timeout(15_000) });
    return this.record(
      { label: intent.label, expect: [intent.expect].flat(), kind: intent.kind ?? 'valid', where: intent.where },
      method,
      url,
      r,
      'prism',
    );
  }

  /**
   * A call straight to the API whose answer Prism's validator checks in this process: for
   * requests its proxy cannot carry (it never answers a body that is not JSON under a JSON
   * content type) and streams that stay open.
   */
  async direct(
    intent: { label: string; expect: number | number[]; kind?: Intent['kind'] },
    method: string,
    url: string,
    init: RequestInit,
    readBody: (r: Response) => Promise<string> = (r) => r.text(),
  ): Promise<Call> {
    const r = await fetch(this.stack.base + url, init);
    const text = await readBody(r);
    let body: any = text;
    if (/json/.test(r.headers.get('content-type') ?? '')) {
      try {
        body = JSON.parse(text);
      } catch {
        body = text;
      }
    }
    const call = await this.record(
      { label: intent.label, expect: [intent.expect].flat(), kind: intent.kind ?? 'valid' },
      method,
      url,
      new Response(r.status === 204 ? null : text, { status: r.status, headers: r.headers }),
      'direct',
      [],
    );
    this.directExchanges.push({
      call,
      request: { method, url },
      response: { status: r.status, headers: r.headers, body },
    });
    return call;
  }
}

/** The document's operations, literal paths before templated ones (the first match names a call). */
function operationsOf(doc: any): Operation[] {
  const operations: Operation[] = [];
  for (const [template, item] of Object.entries<any>(doc.paths ?? {})) {
    for (const method of ['get', 'put', 'post', 'patch', 'delete', 'head', 'options']) {
      if (!item[method]) continue;
      const pattern = template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+');
      operations.push({
        key: `${method.toUpperCase()} ${template}`,
        method: method.toUpperCase(),
        template,
        regex: new RegExp(`^${pattern}$`),
        op: item[method],
      });
    }
  }
  operations.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
  return operations;
}
