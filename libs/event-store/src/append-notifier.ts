import { EventEmitter } from 'node:events';
import { Client } from 'pg';
import { EVENTS_CHANNEL } from './announcement';
import { parseAnnouncement } from './announcement';

/**
 * Tells this process about appends made by any process, through LISTEN/NOTIFY on one dedicated
 * connection: 'append' with the Announcement (the stream id, mostly its version, sometimes the
 * events). Notifications are a latency optimisation only: readers also poll, and a dropped
 * connection is re-opened with backoff (emitting 'reconnected' so readers catch up at once).
 */
export class AppendNotifier extends EventEmitter {
  private client?: Client;
  private stopped = false;
  private retryMs = 100;

  constructor(private readonly databaseUrl: string) {
    super();
    this.setMaxListeners(0);
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect().catch(() => this.scheduleReconnect());
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl });
    client.on('error', () => this.dropped(client));
    client.on('end', () => this.dropped(client));
    client.on('notification', (n) => {
      if (n.channel === EVENTS_CHANNEL) this.emit('append', parseAnnouncement(n.payload ?? ''));
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${EVENTS_CHANNEL}`);
    } catch (e) {
      await client.end().catch(() => undefined); // connected but LISTEN failed: do not keep the socket
      throw e;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined); // stop() ran while this connection was being opened
      return;
    }
    this.client = client;
    this.retryMs = 100;
    this.emit('reconnected');
  }

  private dropped(client: Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.stopped) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 5_000);
    setTimeout(() => {
      if (!this.stopped) this.connect().catch(() => this.scheduleReconnect());
    }, wait).unref();
  }
}
