import type { BookProblemCode } from '@parley/books';

/**
 * Every kind of error the API answers with, as RFC 9457 problem details. `code` is stable: clients
 * branch on it, and docs/errors.md lists each one. A code's status never changes; a new situation
 * gets a new code. The OpenAPI document's error responses are generated from this table.
 */
export const PROBLEM_CATALOGUE = {
  validation_failed: {
    status: 400,
    title: 'The request is not valid',
    description: 'A path, query, header or body value is missing or wrong; `errors` says which field and why.',
  },
  model_not_allowed: {
    status: 400,
    title: 'The model is not allowed',
    description:
      "A conversation's `policy.model` must be one the operator lists in POLICY_MODELS (unset: only LLM_MODEL; `*`: " +
      'any priced model), priced, on a provider the server talks to; `detail` says which models may be chosen.',
  },
  malformed_json: {
    status: 400,
    title: 'The body is not valid JSON',
    description: 'The request body cannot be parsed.',
  },
  book_invalid: {
    status: 400,
    title: 'The book is not valid',
    description: 'The upload is empty, or its title or author is too long or holds control characters.',
  },
  book_no_text: { status: 400, title: 'The book has no text', description: 'Nothing readable was found in the file.' },
  webhook_url_refused: {
    status: 400,
    title: 'The webhook URL is refused',
    description:
      'It is not an http(s) URL, holds credentials, does not resolve, or leads to a loopback, link-local or private ' +
      'address (allowed only with WEBHOOKS_ALLOW_PRIVATE_URLS=true); `detail` says which, never what the host ' +
      'resolved to (the last two are told in the same words).',
  },
  token_missing: {
    status: 401,
    title: 'A bearer token is required',
    description: 'Send `Authorization: Bearer <token>` (or `?access_token=` on the SSE endpoints).',
  },
  token_invalid: {
    status: 401,
    title: 'The token is not valid',
    description: 'Its signature, algorithm, issuer, audience or subject is wrong.',
  },
  token_expired: { status: 401, title: 'The token has expired', description: 'Get a new token and try again.' },
  budget_exceeded: {
    status: 402,
    title: "This month's budget is spent",
    description:
      'The reader has spent `spentUsd` of their `budgetUsd` this calendar month (UTC); posting is possible again at ' +
      '`resetsAt`, in `retryAfter` seconds (also in `Retry-After`). Nothing was recorded.',
  },
  origin_not_allowed: {
    status: 403,
    title: 'The origin is not allowed',
    description:
      "A browser page of another origin called /mcp: only the API's own origin and those CORS_ORIGINS lists may " +
      '(the MCP specification asks servers to check Origin, against DNS rebinding).',
  },
  operator_role_required: {
    status: 403,
    title: 'Operators only',
    description: 'The queue board opens only to a token whose `parley_roles` claim holds `"operator"`.',
  },
  forbidden: {
    status: 403,
    title: 'Not allowed',
    description:
      'The caller may see the resource but not do this: publish a catalogue book without the `publisher` role, or ' +
      'rename or withdraw a catalogue book without being a publisher of its tenant, or administer a tenant without ' +
      'the `admin` role and a `parley_tenant`.',
  },
  not_found: { status: 404, title: 'No such resource', description: 'No route answers this path.' },
  conversation_not_found: {
    status: 404,
    title: 'Conversation not found',
    description: 'No conversation with this id belongs to the caller (deleted, foreign or never created).',
  },
  reader_not_found: {
    status: 404,
    title: 'Reader not found',
    description: "No reader with this id is in the admin's tenant (not seen with its parley_tenant, or in another).",
  },
  book_not_found: {
    status: 404,
    title: 'Book not found',
    description:
      "No book with this id is the caller's or in their tenant's catalogue (deleted, withdrawn, foreign or never uploaded).",
  },
  turn_not_found: { status: 404, title: 'Turn not found', description: 'The conversation has no turn with this id.' },
  batch_not_found: {
    status: 404,
    title: 'Batch not found',
    description: 'The conversation has no batch with this id.',
  },
  webhook_not_found: {
    status: 404,
    title: 'Webhook endpoint not found',
    description: 'No webhook endpoint with this id belongs to the caller (deleted, foreign or never created).',
  },
  approval_not_found: {
    status: 404,
    title: 'Approval not found',
    description: 'The turn asked no approval of a tool call with this id.',
  },
  version_not_found: {
    status: 404,
    title: 'Version not found',
    description: 'The conversation has not reached this version.',
  },
  method_not_allowed: {
    status: 405,
    title: 'The method is not allowed',
    description: 'The path exists but does not answer this method; `Allow` lists the methods it answers.',
  },
  version_conflict: {
    status: 409,
    title: 'The conversation has moved on',
    description: '`If-Match` names an older version than the current one, given in `currentVersion`. Read and retry.',
  },
  turn_in_progress: {
    status: 409,
    title: 'A turn is already running',
    description: 'Sent with `?multitask=reject` while the agent still answers the previous message.',
  },
  already_exists: { status: 409, title: 'The conversation already exists', description: 'Its id is taken.' },
  approval_decided: {
    status: 409,
    title: 'The approval was decided already',
    description: 'The tool call was approved or denied before (by the reader, or on expiry), or its turn has ended.',
  },
  book_not_ready: {
    status: 409,
    title: 'The book is not ready',
    description: 'It is still being ingested (wait for `ready`) or its ingestion failed (upload it again).',
  },
  webhook_limit_reached: {
    status: 409,
    title: 'Too many webhook endpoints',
    description: 'The caller has the most endpoints a reader may have (20); delete one first.',
  },
  payload_too_large: {
    status: 413,
    title: 'The request is too large',
    description: 'The body is over the limit for this route.',
  },
  book_too_large: { status: 413, title: 'The book is too large', description: 'The file is over the upload limit.' },
  book_too_large_when_expanded: {
    status: 413,
    title: 'The book expands too much',
    description: "Its text, once extracted, is over the limit (also a failed book's `error.code`).",
  },
  book_too_many_pages: {
    status: 413,
    title: 'The book has too many pages',
    description: "The PDF has more pages than the limit (also a failed book's `error.code`).",
  },
  book_unsupported_type: {
    status: 415,
    title: 'Unsupported book format',
    description:
      'Send text, Markdown, PDF, EPUB, HTML or Word (by `format`, or a file named .txt, .md, .pdf, .epub, .html or .docx).',
  },
  idempotency_key_reused: {
    status: 422,
    title: 'Idempotency-Key reused with another body',
    description: 'A key names one message; send a new message with a new key.',
  },
  book_parse_failed: { status: 422, title: 'The book cannot be read', description: 'The file could not be parsed.' },
  book_parse_timeout: {
    status: 422,
    title: 'The book took too long to read',
    description: "Parsing ran over its time limit (also a failed book's `error.code`).",
  },
  book_encrypted: {
    status: 422,
    title: 'The book is encrypted',
    description:
      "An EPUB under DRM (META-INF/encryption.xml over its documents) or a password-protected Word document: its text cannot be read without the publisher's key (a failed book's `error.code`).",
  },
  book_zip_bomb: {
    status: 422,
    title: 'The archive is a decompression bomb',
    description:
      "The EPUB or DOCX has too many entries, or entries that declare or inflate past the limits (size or ratio) (a failed book's `error.code`).",
  },
  book_zip_unsafe_path: {
    status: 422,
    title: 'The archive has entries outside itself',
    description:
      "An entry of the EPUB or DOCX is named with `../`, an absolute path or a drive letter (a failed book's `error.code`).",
  },
  book_xml_entities: {
    status: 422,
    title: 'The book declares XML entities',
    description:
      'An XML or HTML part declares entities (entity expansion such as "billion laughs", or external entities) (a failed book\'s `error.code`).',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    description:
      'The caller made too many requests of one kind (posts, forks, new conversations, batches, searches, MCP asks) ' +
      'or holds too many streams open; wait `retryAfter` seconds (also in `Retry-After`). Nothing was recorded.',
  },
  book_ingest_busy: {
    status: 429,
    title: 'Too many books ingesting',
    description: 'The caller or the service has too many books ingesting; wait `retryAfter` seconds.',
  },
  internal_error: { status: 500, title: 'Internal error', description: 'A fault on the server; it is logged.' },
  database_unavailable: {
    status: 503,
    title: 'The database is unavailable',
    description: 'A restart or failover is under way; retry after `retryAfter` seconds (also in `Retry-After`).',
  },
  identity_provider_unavailable: {
    status: 503,
    title: 'The identity provider is unavailable',
    description: 'The keys to verify the token cannot be fetched; retry shortly.',
  },
  not_ready: {
    status: 503,
    title: 'Not ready',
    description: 'The database or Redis does not answer; `checks` says which.',
  },
} as const satisfies Record<string, { status: number; title: string; description: string }>;

export type ProblemCode = keyof typeof PROBLEM_CATALOGUE;

/** Every code a refused book carries is in the catalogue (a compile error otherwise). */
export const bookProblem = (code: BookProblemCode): ProblemCode => code;
export const PROBLEM_CODES = Object.keys(PROBLEM_CATALOGUE) as ProblemCode[];

/** The problem `type` URI of a code; the API serves the catalogue entry there. */
export const problemType = (code: ProblemCode): string => `/problems/${code}`;

/** The codes an unexplained status falls back to (errors raised below our code: routing, body parsing, uploads). */
export const CODE_OF_STATUS: Record<number, ProblemCode> = {
  400: 'validation_failed',
  401: 'token_missing',
  404: 'not_found',
  409: 'version_conflict',
  413: 'payload_too_large',
  415: 'book_unsupported_type',
  422: 'idempotency_key_reused',
  429: 'rate_limited',
  503: 'database_unavailable',
};
