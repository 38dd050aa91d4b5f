/**
 * The API's problem answers (RFC 9457, docs/errors.md) as values and errors a program can switch on.
 */

/**
 * RFC 9457 problem details `{type, title, status, detail, code}`; the NestJS shape
 * `{statusCode, error, message}` (message a string or a list) is read too.
 */
export function readProblem(body: unknown): { detail?: string; code?: string } {
  if (typeof body === 'string') return { detail: body.trim().slice(0, 300) || undefined };
  if (!body || typeof body !== 'object') return {};
  const b = body as Record<string, unknown>;
  const text = (v: unknown): string | undefined =>
    typeof v === 'string' && v.trim() ? v : Array.isArray(v) && v.length ? v.map(String).join('; ') : undefined;
  return {
    detail: text(b.detail) ?? text(b.message) ?? text(b.title) ?? text(b.error),
    code: typeof b.code === 'string' ? b.code : undefined,
  };
}

/** The fields of a `budget_exceeded` problem (402): the reader's monthly budget is spent until `resetsAt`. */
export interface BudgetExceeded {
  budgetUsd: number;
  spentUsd: number;
  /** ISO 8601: the start of next month (UTC) */
  resetsAt: string;
}

/** The budget_exceeded problem a body holds, or undefined for any other answer. */
export function readBudgetExceeded(body: unknown): BudgetExceeded | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const b = body as Record<string, unknown>;
  if (b.code !== 'budget_exceeded' || typeof b.resetsAt !== 'string') return undefined;
  return { budgetUsd: Number(b.budgetUsd), spentUsd: Number(b.spentUsd), resetsAt: b.resetsAt };
}

/** Dollars as a reader reads them: cents from $1, else enough digits to tell small sums apart. */
export const formatUsd = (usd: number): string => (usd === 0 ? '$0' : `$${usd >= 1 ? usd.toFixed(2) : usd.toFixed(4)}`);

/** An answer that refuses for good (a 4xx other than 408 and 429): its status, and its problem's `code` and `detail`. */
export class ParleyApiError extends Error {
  readonly code?: string;
  readonly detail?: string;

  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    const { detail, code } = readProblem(body);
    super(`HTTP ${status}${code ? ` ${code}` : ''}${detail ? `: ${detail}` : ''}`);
    this.name = 'ParleyApiError';
    this.code = code;
    this.detail = detail;
  }
}
