/**
 * Every way a command can end, as an exit code, so scripts can branch on what happened without
 * parsing messages (the table is in docs/cli.md).
 */
export const EXIT = {
  ok: 0,
  /** a bug in the client or an answer it cannot read */
  unexpected: 1,
  /** wrong arguments */
  usage: 2,
  /** no answer from PARLEY_URL: the server is down, or the URL is wrong */
  unreachable: 3,
  /** 401/403: the token is missing, wrong or expired */
  auth: 4,
  /** 404: the book or conversation does not exist (any more), or belongs to someone else */
  notFound: 5,
  /** another 4xx: the API refused the request (invalid input, 409 conflict, 413, 429…) */
  refused: 6,
  /** 5xx: the server failed or is unavailable for a moment (503) */
  server: 7,
  /** the environment is wrong or incomplete for a local command: a variable missing or invalid (AUTH_JWT_SECRET for token) */
  config: 8,
} as const;

/** An error the user caused or can act on: printed as one line, never with a stack. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = EXIT.unexpected,
  ) {
    super(message);
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, EXIT.usage);
  }
}

/** The exit code for an HTTP status the API answered with. */
export function exitCodeOf(status: number): number {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 404 || status === 410) return EXIT.notFound;
  if (status >= 500) return EXIT.server;
  return EXIT.refused;
}
