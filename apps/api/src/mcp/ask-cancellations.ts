import { Inject, Injectable } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { RedisConnections } from '@parley/platform';

/** Which MCP request of which client asked: the caller, the client's Mcp-Session-Id and the JSON-RPC id. */
export interface AskRequest {
  userId: string;
  sessionId: string;
  requestId: string | number;
}

/** The turn an `ask` posted. */
export interface AskedTurn {
  conversationId: string;
  turnId: string;
}

/** Long enough for any turn; the keys only have to outlive the request that set them. */
const TTL_S = 6 * 60 * 60;

/**
 * Where `notifications/cancelled` finds the turn of the `ask` it names. /mcp is stateless (any API
 * replica answers any request), so the notification arrives in its own HTTP request, often on
 * another process than the one following the turn: the ask records its turn in Redis, and a
 * cancel that comes before the turn is posted leaves a mark the ask reads once it has posted.
 * Whichever of the two writes second sees the other's write, so a cancel is never lost.
 */
@Injectable()
export class AskCancellations {
  constructor(
    private readonly redis: RedisConnections,
    @Inject(CONFIG) private readonly config: AppConfig,
  ) {}

  /** Records the turn an ask posted; true when that ask was cancelled meanwhile. */
  async posted(ask: AskRequest, turn: AskedTurn): Promise<boolean> {
    await this.redis.main.set(this.key(ask, 'turn'), JSON.stringify(turn), 'EX', TTL_S);
    return (await this.redis.main.get(this.key(ask, 'cancelled'))) !== null;
  }

  /** Marks the ask cancelled; the turn it posted, if it has posted one yet. */
  async cancelled(ask: AskRequest): Promise<AskedTurn | undefined> {
    await this.redis.main.set(this.key(ask, 'cancelled'), '1', 'EX', TTL_S);
    const turn = await this.redis.main.get(this.key(ask, 'turn'));
    return turn ? (JSON.parse(turn) as AskedTurn) : undefined;
  }

  /** Whether the ask's client cancelled it. */
  async wasCancelled(ask: AskRequest): Promise<boolean> {
    return (await this.redis.main.get(this.key(ask, 'cancelled'))) !== null;
  }

  private key({ userId, sessionId, requestId }: AskRequest, what: 'turn' | 'cancelled'): string {
    const id = `${typeof requestId}:${requestId}`; // JSON-RPC ids 1 and "1" are different requests
    return `${this.config.queuePrefix}:mcp-ask:${encodeURIComponent(userId)}:${encodeURIComponent(sessionId)}:${encodeURIComponent(id)}:${what}`;
  }
}
