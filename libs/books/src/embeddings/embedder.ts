import type { EmbeddingsConfig } from '@parley/config';

/**
 * The embeddings port: texts in, unit-length vectors out. Two adapters speak hosted APIs over
 * HTTP (Node's fetch): Voyage (`input_type` document/query) and any OpenAI-compatible server
 * (OpenAI itself, or a self-hosted one such as text-embeddings-inference or vLLM). Requests are
 * batched within the provider's limits (inputs and estimated tokens), time out, and are retried
 * with exponential backoff on 429 and 5xx (a Retry-After header is honoured).
 */
export interface Embedder {
  /** the model name stored with every vector: search uses only vectors of this model */
  readonly model: string;
  /** the vectors' length, when configured (checked against what the provider returns) */
  readonly dimensions: number | null;
  embedDocuments(texts: string[], onBatch?: (done: number) => void | Promise<void>): Promise<Float32Array[]>;
  embedQuery(text: string): Promise<Float32Array>;
}

/** A request refused for good (4xx other than 429), or retries exhausted. */
export class EmbeddingsError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
  }
}

interface ProviderLimits {
  maxInputs: number;
  /** estimated tokens per request (4 characters a token: conservative for English) */
  maxTokens: number;
}

const LIMITS: Record<'voyage' | 'openai', ProviderLimits> = {
  // Voyage: 1,000 inputs and 120k tokens (voyage-3.5) a request; OpenAI: 2,048 inputs, 300k tokens
  voyage: { maxInputs: 1000, maxTokens: 100_000 },
  openai: { maxInputs: 2048, maxTokens: 250_000 },
};

const estimateTokens = (text: string) => Math.ceil(text.length / 4) + 1;

/** Splits texts into requests within both limits, in order. */
export function batches(texts: string[], maxInputs: number, maxTokens: number): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let tokens = 0;
  for (const t of texts) {
    const n = estimateTokens(t);
    if (current.length && (current.length >= maxInputs || tokens + n > maxTokens)) {
      out.push(current);
      current = [];
      tokens = 0;
    }
    current.push(t);
    tokens += n;
  }
  if (current.length) out.push(current);
  return out;
}

function normalise(v: number[]): Float32Array {
  const out = Float32Array.from(v);
  let sum = 0;
  for (const x of out) sum += x * x;
  const norm = Math.sqrt(sum) || 1;
  for (let i = 0; i < out.length; i++) out[i] /= norm;
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Seconds or an HTTP date, as milliseconds; null when absent or unreadable. */
export function retryAfterMs(header: string | null): number | null {
  if (!header) return null;
  const s = Number(header);
  if (Number.isFinite(s)) return Math.max(0, s * 1000);
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

export abstract class HttpEmbedder implements Embedder {
  /** backoff base and cap; Retry-After is honoured up to the cap */
  static backoffMs = 500;
  static maxBackoffMs = 20_000;
  private readonly limits: ProviderLimits;

  constructor(
    protected readonly config: EmbeddingsConfig,
    provider: 'voyage' | 'openai',
    private readonly url: string,
  ) {
    const l = LIMITS[provider];
    this.limits = { maxInputs: Math.min(l.maxInputs, config.batchSize), maxTokens: l.maxTokens };
  }

  get model(): string {
    return this.config.model;
  }

  get dimensions(): number | null {
    return this.config.dimensions;
  }

  protected abstract body(input: string[], kind: 'document' | 'query'): Record<string, unknown>;

  async embedDocuments(texts: string[], onBatch?: (done: number) => void | Promise<void>): Promise<Float32Array[]> {
    const out: Float32Array[] = [];
    for (const batch of batches(texts, this.limits.maxInputs, this.limits.maxTokens)) {
      out.push(...(await this.request(batch, 'document', this.config.maxRetries)));
      await onBatch?.(out.length);
    }
    return out;
  }

  async embedQuery(text: string): Promise<Float32Array> {
    // a reader waits on this one: one retry at most, then search goes on lexically
    const [v] = await this.request([text], 'query', Math.min(this.config.maxRetries, 1));
    return v;
  }

  private async request(input: string[], kind: 'document' | 'query', retries: number): Promise<Float32Array[]> {
    for (let attempt = 0; ; attempt++) {
      let status: number | null = null;
      let wait: number | null = null;
      let message = '';
      try {
        const res = await fetch(this.url, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            ...(this.config.apiKey ? { authorization: `Bearer ${this.config.apiKey}` } : {}),
          },
          body: JSON.stringify(this.body(input, kind)),
          signal: AbortSignal.timeout(this.config.timeoutMs),
        });
        if (res.ok) return this.parse(await res.json(), input.length);
        status = res.status;
        wait = retryAfterMs(res.headers.get('retry-after'));
        message = `embeddings request failed: ${res.status} ${(await res.text().catch(() => '')).slice(0, 300)}`;
        if (status !== 429 && status < 500) throw new EmbeddingsError(message, status);
      } catch (e) {
        if (e instanceof EmbeddingsError) throw e;
        if (!status) message = `embeddings request failed: ${(e as Error).message}`;
      }
      if (attempt >= retries) throw new EmbeddingsError(message, status);
      const backoff = HttpEmbedder.backoffMs * 2 ** attempt * (0.75 + Math.random() / 2);
      await sleep(Math.min(wait ?? backoff, HttpEmbedder.maxBackoffMs));
    }
  }

  private parse(body: unknown, expected: number): Float32Array[] {
    const data = (body as { data?: { embedding?: unknown; index?: number }[] })?.data;
    if (!Array.isArray(data) || data.length !== expected)
      throw new EmbeddingsError(`embeddings response has ${Array.isArray(data) ? data.length : 'no'} vectors`, null);
    const out = new Array<Float32Array>(expected);
    data.forEach((d, i) => {
      const e = d.embedding;
      if (!Array.isArray(e) || !e.length || e.some((x) => typeof x !== 'number'))
        throw new EmbeddingsError('embeddings response has a malformed vector', null);
      if (this.config.dimensions && e.length !== this.config.dimensions)
        throw new EmbeddingsError(`expected ${this.config.dimensions} dimensions, got ${e.length}`, null);
      out[typeof d.index === 'number' ? d.index : i] = normalise(e as number[]);
    });
    return out;
  }
}

/** Voyage AI: POST https://api.voyageai.com/v1/embeddings {input, model, input_type, output_dimension?}. */
export class VoyageEmbedder extends HttpEmbedder {
  constructor(config: EmbeddingsConfig) {
    super(config, 'voyage', `${(config.baseUrl ?? 'https://api.voyageai.com').replace(/\/+$/, '')}/v1/embeddings`);
  }

  protected body(input: string[], kind: 'document' | 'query') {
    return {
      input,
      model: this.config.model,
      input_type: kind,
      ...(this.config.dimensions ? { output_dimension: this.config.dimensions } : {}),
    };
  }
}

/** OpenAI and compatible servers: POST {base}/v1/embeddings {input, model, dimensions?}. */
export class OpenAiEmbedder extends HttpEmbedder {
  constructor(config: EmbeddingsConfig) {
    super(config, 'openai', `${(config.baseUrl ?? 'https://api.openai.com').replace(/\/+$/, '')}/v1/embeddings`);
  }

  protected body(input: string[]) {
    return {
      input,
      model: this.config.model,
      encoding_format: 'float',
      ...(this.config.dimensions ? { dimensions: this.config.dimensions } : {}),
    };
  }
}

/** The configured adapter; null when embeddings are off (search stays lexical). */
export function createEmbedder(config: EmbeddingsConfig | null | undefined): Embedder | null {
  if (!config || config.provider === 'none') return null;
  return config.provider === 'voyage' ? new VoyageEmbedder(config) : new OpenAiEmbedder(config);
}

/** Injection token of the Embedder (null when none is configured). */
export const EMBEDDER = 'EMBEDDER';
