import { SpanKind } from '@opentelemetry/api';
import { recordError, tracer } from '@parley/event-store';
import { chatResultAttributes, providerRequestAttributes } from './chat-span';
import {
  ChatOptions,
  ChatOutcome,
  ChatResult,
  LlmError,
  LlmMessage,
  providerFailure,
  StoppedAttempt,
  withStoppedAttempts,
} from './llm.types';
import { midStreamBackoffMs, sleepUnlessAborted } from './mid-stream-retry';

/**
 * What every provider adapter's calls share, written once: the `chat <model>` span around a
 * call, the SDK's errors classified as LlmErrors, one abort whichever SDK saw it, and the retry
 * of a stream broken off midway with what its stopped attempts were billed. An adapter keeps only
 * what its API makes its own: the request, the stream's parsing, the shapes of its SDK's errors.
 */
export class ProviderCall {
  constructor(private readonly api: ProviderApi) {}

  /**
   * One model call in a `chat <model>` client span (GenAI semantic conventions): the request's
   * attributes, then the answer's, or the provider batch it went to or waits in, or the error.
   * `messages` undefined: the prompt stays off the span even with content capture on.
   */
  traced<T extends ChatOutcome>(
    request: SpanRequest,
    messages: LlmMessage[] | undefined,
    call: () => Promise<T>,
  ): Promise<T> {
    const { provider, baseUrl, captureContent } = this.api;
    const attributes = providerRequestAttributes({ provider, ...request }, messages ?? [], {
      baseUrl,
      captureContent: captureContent && messages !== undefined,
    });
    return tracer.startActiveSpan(`chat ${request.model}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
      try {
        const outcome = await call();
        if (outcome.kind === 'answered') span.setAttributes(chatResultAttributes(outcome.result, captureContent));
        else span.setAttribute('parley.llm.provider_batch_id', outcome.providerBatchId);
        return outcome;
      } catch (e) {
        recordError(span, e);
        throw e;
      } finally {
        span.end();
      }
    });
  }

  /** A call made once (no stream to break off), its failure classified. */
  async once<T>(call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (e) {
      throw this.api.classify(e);
    }
  }

  /**
   * A streamed call, asked again (with backoff) when its stream breaks off midway: the SDKs retry
   * a failed HTTP response themselves, not a stream cut after its 200. Attempts stopped after the
   * provider billed them go with the result, or with the error once the retries are spent.
   */
  async streamed(options: Pick<ChatOptions, 'signal'>, attemptOf: (n: number) => StreamAttempt): Promise<ChatResult> {
    const stopped: StoppedAttempt[] = [];
    for (let n = 1; ; n++) {
      const attempt = attemptOf(n);
      try {
        const result = await attempt.run();
        return stopped.length ? { ...result, stoppedAttempts: stopped } : result;
      } catch (e) {
        const error = this.api.classify(e);
        const billed = attempt.billed(isAbort(error) || options.signal?.aborted ? 'aborted' : 'broken');
        if (billed) stopped.push(billed);
        if (!(error instanceof LlmError) || !error.midStream || !error.retryable || n > this.api.maxRetries)
          throw withStoppedAttempts(error, stopped);
        await sleepUnlessAborted(midStreamBackoffMs(n), options.signal);
        if (options.signal?.aborted) throw withStoppedAttempts(abortError(), stopped);
      }
    }
  }
}

/** Who a ProviderCall calls: the provider's name and address, its retries, how its SDK fails. */
export interface ProviderApi {
  /** `gen_ai.provider.name` */
  provider: string;
  baseUrl: string;
  /** the SDK's retries; as many again for a stream broken off midway */
  maxRetries: number;
  /** prompts and answers on the span (OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT) */
  captureContent: boolean;
  /** an SDK's error as Parley reads it: an LlmError, or an abort (abortError), or as it is */
  classify(e: unknown): Error;
}

/** A call as its span names it: the model asked for, max_tokens, the instructions as sent (one or several blocks). */
export interface SpanRequest {
  model: string;
  maxTokens: number;
  system: string | string[];
}

/** One attempt of a streamed call: run it to its end; should it stop, what the provider billed for it. */
export interface StreamAttempt {
  run(): Promise<ChatResult>;
  /** undefined before the provider billed anything (a call refused, or cut before its first event) */
  billed(cause: StoppedAttempt['cause']): StoppedAttempt | undefined;
}

/** An abort as the rest of Parley knows one (isAbort), whichever SDK saw it. */
export function abortError(): Error {
  return Object.assign(new Error('Request was aborted.'), { name: 'AbortError' });
}

/** Whether a call stopped because its signal aborted it (the turn was cancelled or handed back). */
export const isAbort = (e: unknown): boolean => (e as Error | undefined)?.name === 'AbortError';

/** A class of an SDK's errors (both SDKs are made by one generator: the same classes, told apart by SDK). */
type SdkErrorClass<E = object> = abstract new (...args: never[]) => Error & E;

/**
 * How one SDK fails, for `classifySdkError`: its three error classes, and what its provider means
 * where the two APIs differ (the status of "overloaded", an error inside the stream, a refusal
 * its words identify, the detail the log gets).
 */
export interface SdkErrors {
  APIUserAbortError: SdkErrorClass;
  APIConnectionError: SdkErrorClass;
  APIError: SdkErrorClass<{ status?: number; error?: unknown }>;
  /** the HTTP status the provider answers when it is overloaded (Anthropic 529, OpenAI 503) */
  overloadedStatus: number;
  /** the provider's text as the log keeps it (OpenAI's names the server it came from) */
  detail(message: string, status?: number): string;
  /** an error event after the 200: the status is gone, the stream broke off midway */
  inStream(e: Error & { error?: unknown }): LlmError;
  /** an HTTP refusal the provider's words say more of (a model without tools), before the status decides */
  refusal?(status: number, message: string): LlmError | undefined;
  /** any other error the adapter knows (a connection dropped while the body streamed) */
  other?(e: unknown): LlmError | undefined;
}

/**
 * An SDK's error as an LlmError that says whether asking again may help: unreachable, an HTTP
 * status (408, 409, 429 and 5xx retryable, as the SDKs retry them), or a stream broken midway.
 * An abort is an abort; an error that is Parley's own (an LlmError) stays as it is.
 */
export function classifySdkError(e: unknown, sdk: SdkErrors): Error {
  if (e instanceof LlmError || isAbort(e)) return e as Error;
  if (e instanceof sdk.APIUserAbortError) return abortError();
  if (e instanceof sdk.APIConnectionError) return providerFailure(sdk.detail(e.message), 'llm_unreachable', true);
  if (e instanceof sdk.APIError) {
    const status = e.status ?? 0;
    if (!status) return sdk.inStream(e);
    const refused = sdk.refusal?.(status, e.message);
    if (refused) return refused;
    const retryable = status === 408 || status === 409 || status === 429 || status >= 500;
    const code =
      status === sdk.overloadedStatus ? 'llm_overloaded' : status === 429 ? 'llm_rate_limited' : `llm_http_${status}`;
    return providerFailure(sdk.detail(e.message, status), code, retryable);
  }
  return sdk.other?.(e) ?? (e instanceof Error ? e : new Error(String(e)));
}
