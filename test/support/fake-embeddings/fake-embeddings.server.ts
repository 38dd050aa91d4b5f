/**
 * A real HTTP server speaking the embeddings APIs the adapters call: Voyage's
 * (POST /v1/embeddings {input, model, input_type?, output_dimension?}) or OpenAI's
 * ({input, model, encoding_format?, dimensions?}). It rejects what the real APIs reject (no
 * key, no model, an input list too long or empty, an unknown input_type or field) and answers
 * with deterministic vectors: a hashed bag of words, so passages sharing words are near.
 * Faults are scripted: the next requests can answer 429 (with Retry-After) or 5xx, or the
 * server can be "down" (every request 503).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Flavour = 'voyage' | 'openai';

export interface FakeEmbeddingsOptions {
  flavour: Flavour;
  /** accepted bearer key */
  apiKey?: string;
  /** the vectors' length when the request does not ask for one */
  dimensions?: number;
  /** models that exist; others are refused with 400 (Voyage) or 404 (OpenAI) */
  models?: string[];
}

export interface RecordedEmbeddingsRequest {
  model: string;
  input: string[];
  inputType?: string | null;
}

interface Fault {
  status: number;
  retryAfter?: string;
}

const LIMITS: Record<Flavour, { maxInputs: number; maxChars: number }> = {
  voyage: { maxInputs: 1000, maxChars: 120_000 * 4 },
  openai: { maxInputs: 2048, maxChars: 300_000 * 4 },
};

const FIELDS: Record<Flavour, string[]> = {
  voyage: ['input', 'model', 'input_type', 'truncation', 'output_dimension', 'output_dtype', 'encoding_format'],
  openai: ['input', 'model', 'encoding_format', 'dimensions', 'user'],
};

/** Words the fake treats as one meaning (its stand-in for a model's semantics). */
const SYNONYMS: Record<string, string> = { monarch: 'queen', sovereign: 'queen', feline: 'cat', kitten: 'cat' };

/** The fake's vector of a text: its words (lower-cased, 3+ letters, crudely stemmed) hashed into buckets. */
export function bagOfWordsVector(text: string, dimensions: number): number[] {
  const v: number[] = new Array<number>(dimensions).fill(0);
  for (const raw of text.toLowerCase().match(/[a-z]{3,}/g) ?? []) {
    const stem = raw.replace(/(ing|ed|es|s)$/, '');
    const word = SYNONYMS[raw] ?? SYNONYMS[stem] ?? stem;
    const h = createHash('sha1').update(word).digest();
    const i = h.readUInt32LE(0) % dimensions;
    v[i] += h[4] & 1 ? 1 : -1;
  }
  if (!v.some((x) => x !== 0)) v[0] = 1;
  return v;
}

export class FakeEmbeddings {
  readonly requests: RecordedEmbeddingsRequest[] = [];
  /** status codes of refused requests, with the reason */
  readonly rejected: { status: number; message: string }[] = [];
  private readonly faults: Fault[] = [];
  down = false;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly options: FakeEmbeddingsOptions,
  ) {}

  static async start(options: FakeEmbeddingsOptions): Promise<FakeEmbeddings> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const fake = new FakeEmbeddings(server, `http://127.0.0.1:${port}`, options);
    server.on('request', (req, res) => {
      fake.handle(req, res).catch((e: Error) => fake.send(res, 500, { error: e.message }));
    });
    return fake;
  }

  /** The next requests answer these statuses in order (then normal service resumes). */
  failNext(...faults: Fault[]): void {
    this.faults.push(...faults);
  }

  /** Inputs embedded (over every successful request). */
  get embedded(): number {
    return this.requests.reduce((n, r) => n + r.input.length, 0);
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
    if (res.headersSent) return void res.end();
    res.writeHead(status, { 'content-type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  }

  private refuse(res: ServerResponse, status: number, message: string, headers: Record<string, string> = {}) {
    this.rejected.push({ status, message });
    const body =
      this.options.flavour === 'voyage'
        ? { detail: message }
        : { error: { message, type: status === 429 ? 'rate_limit_exceeded' : 'invalid_request_error' } };
    this.send(res, status, body, headers);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method !== 'POST' || req.url !== '/v1/embeddings') return this.refuse(res, 404, 'not found');
    if (this.down) return this.refuse(res, 503, 'service unavailable');
    const fault = this.faults.shift();
    if (fault)
      return this.refuse(
        res,
        fault.status,
        `fake ${fault.status}`,
        fault.retryAfter !== undefined ? { 'retry-after': fault.retryAfter } : {},
      );
    if (this.options.apiKey && req.headers.authorization !== `Bearer ${this.options.apiKey}`)
      return this.refuse(res, 401, 'invalid or missing API key');
    if (!/^application\/json/.test(req.headers['content-type'] ?? ''))
      return this.refuse(res, 400, 'content-type must be application/json');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      return this.refuse(res, 400, 'body is not JSON');
    }
    const problem = this.validate(body);
    if (problem) return this.refuse(res, problem.status, problem.message);
    const input = typeof body.input === 'string' ? [body.input] : (body.input as string[]);
    const model = body.model as string;
    const dims =
      (body.output_dimension as number | undefined) ??
      (body.dimensions as number | undefined) ??
      this.options.dimensions ??
      64;
    this.requests.push({ model, input, inputType: body.input_type as string | null | undefined });
    const tokens = input.reduce((n, t) => n + Math.ceil(t.length / 4), 0);
    this.send(res, 200, {
      object: 'list',
      data: input.map((t, index) => ({ object: 'embedding', embedding: bagOfWordsVector(t, dims), index })),
      model,
      usage:
        this.options.flavour === 'voyage' ? { total_tokens: tokens } : { prompt_tokens: tokens, total_tokens: tokens },
    });
  }

  private validate(body: Record<string, unknown>): { status: number; message: string } | null {
    const f = this.options.flavour;
    const unknown = Object.keys(body).filter((k) => !FIELDS[f].includes(k));
    if (unknown.length) return { status: 400, message: `unknown fields: ${unknown.join(', ')}` };
    if (typeof body.model !== 'string' || !body.model) return { status: 400, message: 'model is required' };
    if (this.options.models && !this.options.models.includes(body.model))
      return { status: f === 'voyage' ? 400 : 404, message: `model ${body.model} does not exist` };
    const input = body.input;
    const list = typeof input === 'string' ? [input] : input;
    if (!Array.isArray(list) || list.some((t) => typeof t !== 'string'))
      return { status: 400, message: 'input must be a string or an array of strings' };
    if (!list.length) return { status: 400, message: 'input must not be empty' };
    if (list.length > LIMITS[f].maxInputs)
      return { status: 400, message: `input has ${list.length} items, at most ${LIMITS[f].maxInputs}` };
    if (f === 'openai' && list.some((t) => t === '')) return { status: 400, message: 'input must not contain ""' };
    if ((list as string[]).reduce((n, t) => n + t.length, 0) > LIMITS[f].maxChars)
      return { status: 400, message: 'too many tokens in one request' };
    if (f === 'voyage' && body.input_type != null && !['document', 'query'].includes(body.input_type as string))
      return { status: 400, message: 'input_type must be null, "document" or "query"' };
    const dims = f === 'voyage' ? body.output_dimension : body.dimensions;
    if (dims !== undefined && (!Number.isInteger(dims) || (dims as number) < 1))
      return { status: 400, message: 'dimensions must be a positive integer' };
    if (body.encoding_format !== undefined && body.encoding_format !== 'float' && body.encoding_format !== null)
      return { status: 400, message: 'only float encoding is served by this fake' };
    return null;
  }
}
