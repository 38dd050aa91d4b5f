/**
 * The client's one door to the server: the generated typed client over PARLEY_URL, and `call`,
 * which turns each answer into its body or a one-line CliError carrying the exit code.
 */
import { createParleyClient, formatUsd, readBudgetExceeded, readProblem, type ParleyClient } from '@parley/client';
import { CliError, EXIT, exitCodeOf } from './errors';
import type { Target } from './env';

export interface Api {
  client: ParleyClient;
  target: Target;
}

export function connect(target: Target): Api {
  return { client: createParleyClient({ baseUrl: target.baseUrl, token: target.token }), target };
}

/** What openapi-fetch answers: the body typed by the operation's document, or its problem. */
interface Answer<D> {
  data?: D;
  error?: unknown;
  response: Response;
}

/**
 * Runs one request; answers the body as T. `what` names the resource for messages
 * ("conversation 1b2c…"). Any failure becomes a CliError with one line and an exit code.
 */
export async function call<D>(api: Api, what: string, request: () => Promise<Answer<D>>): Promise<D> {
  let answer: Answer<D>;
  try {
    answer = await request();
  } catch (e) {
    throw unreachable(api.target.baseUrl, e);
  }
  const { response } = answer;
  if (response.ok) return answer.data as D; // a 204 has no body: D is then never read
  throw apiError(api.target, what, response.status, answer.error);
}

/** The error for a non-2xx answer, from its problem+json (or the older {message}) body. */
export function apiError(target: Target, what: string, status: number, body: unknown): CliError {
  const problem = readProblem(body);
  if (status === 401) {
    const hint =
      target.tokenSource === 'PARLEY_TOKEN'
        ? 'PARLEY_TOKEN was refused (wrong or expired)'
        : `the token minted with the ${target.tokenSource} was refused: set PARLEY_TOKEN`;
    return new CliError(`not signed in: ${hint}`, EXIT.auth);
  }
  if (status === 404) return new CliError(`${what} not found (deleted, or not yours)`, EXIT.notFound);
  const budget = readBudgetExceeded(body);
  if (budget) return new CliError(budgetSpent(budget), exitCodeOf(status));
  const detail = problem.detail ?? `HTTP ${status}`;
  const retry = status === 429 || status === 503 ? ' (try again in a moment)' : '';
  return new CliError(`${what}: ${detail}${retry}`, exitCodeOf(status));
}

/** 402 budget_exceeded: what was spent, and the moment (in UTC, as the server counts months) posting works again. */
function budgetSpent(b: { budgetUsd: number; spentUsd: number; resetsAt: string }): string {
  const when = new Intl.DateTimeFormat('en-GB', { dateStyle: 'long', timeStyle: 'short', timeZone: 'UTC' }).format(
    new Date(b.resetsAt),
  );
  return (
    `this month's budget is spent (${formatUsd(b.spentUsd)} of ${formatUsd(b.budgetUsd)}): ` +
    `you can ask again from ${when} UTC, when it resets`
  );
}

/** fetch failed before any answer: say where we tried and what to do, not a stack. */
export function unreachable(baseUrl: string, e: unknown): CliError {
  if (e instanceof CliError) return e;
  const cause = (e as { cause?: { code?: string } })?.cause;
  const why = cause?.code ?? (e instanceof Error ? e.message : String(e));
  return new CliError(
    `cannot reach the Parley API at ${baseUrl} (${why}): is it running? (npm start, or set PARLEY_URL)`,
    EXIT.unreachable,
  );
}
