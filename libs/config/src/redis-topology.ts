import { ConfigError, Env } from './env';

export interface RedisNode {
  host: string;
  port: number;
}

/**
 * One server (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES: any of its nodes; the rest are
 * discovered), or Sentinel (REDIS_SENTINELS watching the primary named REDIS_SENTINEL_NAME). In the
 * last two, REDIS_URL still gives the password and TLS (rediss:) the servers share, if any.
 */
export type RedisTopology =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: RedisNode[]; password?: string; username?: string; tls: boolean }
  | { kind: 'sentinel'; sentinels: RedisNode[]; name: string; password?: string; username?: string; tls: boolean };

function hostPorts(list: string): RedisNode[] {
  return list.split(',').map((hp) => {
    const [host, port] = hp.trim().split(':');
    return { host, port: Number(port) };
  });
}

export function redisTopology(e: Env): RedisTopology {
  if (e.REDIS_CLUSTER_NODES && e.REDIS_SENTINELS) {
    throw new ConfigError('Invalid environment:\n  REDIS_CLUSTER_NODES, REDIS_SENTINELS: set one, not both');
  }
  const url = new URL(e.REDIS_URL);
  const auth = {
    password: url.password ? decodeURIComponent(url.password) : undefined,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    tls: url.protocol === 'rediss:',
  };
  if (e.REDIS_CLUSTER_NODES) return { kind: 'cluster', nodes: hostPorts(e.REDIS_CLUSTER_NODES), ...auth };
  if (e.REDIS_SENTINELS) {
    return { kind: 'sentinel', sentinels: hostPorts(e.REDIS_SENTINELS), name: e.REDIS_SENTINEL_NAME, ...auth };
  }
  return { kind: 'single', url: e.REDIS_URL };
}
