import { Cluster } from 'ioredis';
import { RedisClient } from '@parley/platform';

/**
 * How the id of a worker that keeps a presence connection (below) begins. BullMQ's
 * lock tokens are `<worker id>:<n>`, so a lock whose token begins with this belongs to a worker
 * whose presence can be looked for; a worker of an earlier release (ids without it) is left to
 * its lock's expiry.
 */
export const PRESENT_WORKER_PREFIX = 'present-';

/** The name of a worker's presence connection: `parley-worker:<worker id>` (RedisConnections adds `parley-`). */
const PRESENCE_NAME = 'worker:';
/** The presence connections as CLIENT LIST names them. */
const PRESENCE_IN_CLIENT_LIST = new RegExp(` name=parley-${PRESENCE_NAME}(\\S+)`, 'g');

/** The connection name (for RedisConnections.open) that says this worker is alive. */
export const presenceConnectionName = (workerId: string): string => `${PRESENCE_NAME}${workerId}`;

/** The worker a lock token belongs to (`<worker id>:<n>`), when it is one that keeps a presence connection. */
export function presentHolderOf(token: string | null): string | null {
  if (!token?.startsWith(PRESENT_WORKER_PREFIX)) return null;
  const colon = token.lastIndexOf(':');
  return colon > 0 ? token.slice(0, colon) : null;
}

/**
 * A connection of its own that a worker process keeps open to Redis from its start until after
 * its last turn is done (RedisConnections closes it at shutdown, after the workers drained), named
 * after the worker's id. The kernel closes it when the process is killed, so its absence from
 * CLIENT LIST says the worker is gone, whatever its locks say. BullMQ's own connections cannot say
 * it: a worker that drains for a shutdown closes its blocking connection first.
 * In a cluster, every primary is pinged so the connection is open on each.
 */
export async function announcePresence(presence: RedisClient): Promise<void> {
  if (!(presence instanceof Cluster)) return void (await presence.ping());
  // the primaries are known once the cluster client is ready (it has read the slots)
  if (presence.status !== 'ready') await new Promise((resolve) => presence.once('ready', resolve));
  await Promise.all(presence.nodes('master').map((node) => node.ping()));
}

/** The ids of the workers whose presence connection is open now; null when Redis cannot say (CLIENT LIST refused). */
export async function presentWorkers(redis: RedisClient): Promise<Set<string> | null> {
  const nodes = redis instanceof Cluster ? redis.nodes('master') : [redis];
  if (nodes.length === 0) return null; // a cluster client not connected yet: it cannot say
  const present = new Set<string>();
  try {
    for (const node of nodes) {
      const list = String(await node.client('LIST'));
      for (const match of list.matchAll(PRESENCE_IN_CLIENT_LIST)) present.add(match[1]);
    }
  } catch (e) {
    if (/unknown command|not allowed|NOPERM|disabled/i.test((e as Error).message)) return null;
    throw e;
  }
  return present;
}
