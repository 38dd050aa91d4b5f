/**
 * Preloaded into a service process by the profiling bench (`node -r dist/bench/trace-round-trips.js`):
 * counts the Postgres statements (pg's `Client.query`, by statement text) and Redis commands
 * (ioredis's `sendCommand`, by command name, with Lua scripts named by their first line) the
 * process sends. Each SIGUSR2 writes the counts so far to `$TRACE_ROUND_TRIPS_FILE.<pid>.<n>.json`,
 * so the bench can take the difference over a window. Bench-only: nothing in the service loads it.
 */
import { writeFileSync } from 'node:fs';

const statements = new Map<string, number>();
const commands = new Map<string, number>();
const bump = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1);

function statementKey(config: unknown): string {
  const text = typeof config === 'string' ? config : ((config as { text?: string; name?: string })?.text ?? '');
  const name = typeof config === 'object' ? (config as { name?: string })?.name : undefined;
  const shape = text
    .replace(/'[^']*'/g, "'…'")
    .replace(/\s+/g, ' ')
    .trim();
  return (name ? `[${name}] ` : '') + shape.slice(0, 120);
}

// eslint-disable-next-line @typescript-eslint/no-require-imports
const pg = require('pg');
const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (this: unknown, config: unknown, ...rest: unknown[]) {
  bump(statements, statementKey(config));
  return query.call(this, config, ...rest);
};

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { Redis, Cluster } = require('ioredis');
const scriptNames = new Map<string, string>();
for (const Client of [Redis, Cluster]) {
  const send = Client.prototype.sendCommand;
  Client.prototype.sendCommand = function (
    this: unknown,
    command: { name: string; args: unknown[] },
    ...rest: unknown[]
  ) {
    let key = command.name;
    if (key === 'evalsha' || key === 'eval') key += ` ${scriptNames.get(String(command.args[0])) ?? '?'}`;
    bump(commands, key);
    return send.call(this, command, ...rest);
  };
}
// BullMQ defines its scripts with ioredis's defineCommand: remember each one's name by its sha
const define = Redis.prototype.defineCommand;
Redis.prototype.defineCommand = function (this: unknown, name: string, def: { lua: string }) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const sha = require('node:crypto').createHash('sha1').update(def.lua).digest('hex');
  scriptNames.set(sha, name);
  return define.call(this, name, def);
};

/** The counts so far, for a bench that loads this module in its own process (a peer measured in-process). */
export function roundTripCounts(): { statements: Record<string, number>; commands: Record<string, number> } {
  return { statements: Object.fromEntries(statements), commands: Object.fromEntries(commands) };
}

let marks = 0;
process.on('SIGUSR2', () => {
  const file = `${process.env.TRACE_ROUND_TRIPS_FILE ?? '/tmp/round-trips'}.${process.pid}.${marks++}.json`;
  writeFileSync(file, JSON.stringify(roundTripCounts()));
});
