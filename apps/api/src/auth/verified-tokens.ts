/**
 * Tokens this process verified lately, so a client's every request does not check the same
 * signature again. An entry lives until its token expires, and at most `maxAgeMs`, so a key the
 * identity provider withdraws stops opening doors about as soon as its cached key set would.
 * Only verified tokens are kept; past `capacity` the oldest entry goes.
 */
export class VerifiedTokens<T> {
  private readonly entries = new Map<string, { value: T; until: number }>();

  constructor(
    private readonly maxAgeMs = 60_000,
    private readonly capacity = 10_000,
  ) {}

  get(token: string, now = Date.now()): T | undefined {
    const entry = this.entries.get(token);
    if (!entry) return undefined;
    if (now < entry.until) return entry.value;
    this.entries.delete(token);
    return undefined;
  }

  /** `expSeconds`: the token's `exp` claim. */
  remember(token: string, value: T, expSeconds: number, now = Date.now()): void {
    const until = Math.min(expSeconds * 1000, now + this.maxAgeMs);
    if (until <= now) return;
    this.entries.delete(token);
    this.entries.set(token, { value, until });
    if (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}
