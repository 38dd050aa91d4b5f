import { EventEmitter } from 'node:events';
import { Client } from 'pg';
import { EVENTS_CHANNEL } from './announcement';
import { parseAnnouncement } from './announcement';

/**
 * Tells this process about appends made by any process, through LISTEN/NOTIFY on one dedicated
 * connection: 'append' with the Announcement (the stream id, mostly its version, sometimes the
 * events). Notifications are a latency optimisation only: readers also poll, and a dropped
 * connection is re-opened with backoff (emitting 'reconnected' so readers catch up at once).
 *
 * Once started, it holds that connection only while something listens for 'append': Postgres
 * delivers every append to every listening connection, so a process that hears none (a standby
 * worker) should cost it none. 'reconnected' follows each (re)opening, however it came about.
 *
 * Other channels ride on the same connection (`listenAlso`): their notifications are emitted as
 * 'notification' (channel, payload), and `hears(channel)` says whether they reach this process
 * now, so a cache kept correct by them knows when it may trust itself.
 */
export class AppendNotifier extends EventEmitter {
  private client?: Client;
  private connecting?: Promise<void>;
  private started = false;
  private retryMs = 100;
  /** the channels asked for besides EVENTS_CHANNEL */
  private readonly otherChannels = new Set<string>();
  /** those the current connection listens on */
  private listeningOn = new Set<string>();

  constructor(private readonly databaseUrl: string) {
    super();
    this.setMaxListeners(0);
    // 'newListener' runs before the listener is added, 'removeListener' after it is gone
    this.on('newListener', (event: string) => event === 'append' && this.listen());
    this.on('removeListener', (event: string) => event === 'append' && !this.wanted && this.unlisten());
  }

  /** Listens from now on while anything listens for 'append'; resolves once listening (or failed once) when it does. */
  async start(): Promise<void> {
    this.started = true;
    if (this.listenerCount('append') > 0) await this.listen();
  }

  async stop(): Promise<void> {
    this.started = false;
    await this.unlisten();
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  /** Relays `channel`'s notifications too ('notification'), now and on every connection after. */
  async listenAlso(channel: string): Promise<void> {
    this.otherChannels.add(channel);
    const client = this.client;
    if (!client || this.listeningOn.has(channel)) return;
    try {
      await client.query(`LISTEN ${channel}`);
      if (this.client === client) this.listeningOn.add(channel);
    } catch {
      // the connection failed: the next one listens on it
    }
  }

  /** Whether `channel`'s notifications reach this process now (listenAlso, on a live connection). */
  hears(channel: string): boolean {
    return this.client !== undefined && this.listeningOn.has(channel);
  }

  private get wanted(): boolean {
    return this.started && this.listenerCount('append') > 0;
  }

  private listen(): Promise<void> {
    if (!this.started || this.client) return Promise.resolve();
    this.connecting ??= this.connect().then(
      () => {
        this.connecting = undefined;
        // wanted again while a connection opened unwanted was being closed: open another
        if (this.wanted && !this.client) void this.listen();
      },
      () => {
        this.connecting = undefined;
        this.scheduleReconnect();
      },
    );
    return this.connecting;
  }

  private async unlisten(): Promise<void> {
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new Client({ connectionString: this.databaseUrl });
    client.on('error', () => this.dropped(client));
    client.on('end', () => this.dropped(client));
    client.on('notification', (n) => {
      if (n.channel === EVENTS_CHANNEL) this.emit('append', parseAnnouncement(n.payload ?? ''));
      else this.emit('notification', n.channel, n.payload ?? '');
    });
    const channels = [...this.otherChannels];
    try {
      await client.connect();
      await client.query([EVENTS_CHANNEL, ...channels].map((c) => `LISTEN ${c};`).join(' '));
    } catch (e) {
      await client.end().catch(() => undefined); // connected but LISTEN failed: do not keep the socket
      throw e;
    }
    if (!this.wanted) {
      await client.end().catch(() => undefined); // stopped, or the last listener left, while this connection was being opened
      return;
    }
    this.client = client;
    this.listeningOn = new Set(channels);
    // asked for while this connection was opening
    for (const c of this.otherChannels) if (!this.listeningOn.has(c)) void this.listenAlso(c);
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
    if (!this.wanted) return;
    const wait = this.retryMs;
    this.retryMs = Math.min(this.retryMs * 2, 5_000);
    setTimeout(() => this.wanted && void this.listen(), wait).unref();
  }
}
