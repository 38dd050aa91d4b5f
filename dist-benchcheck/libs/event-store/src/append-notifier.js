"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.AppendNotifier = void 0;
const node_events_1 = require("node:events");
const pg_1 = require("pg");
const event_store_1 = require("./event-store");
/**
 * Tells this process about appends made by any process, through LISTEN/NOTIFY on one dedicated
 * connection. Notifications are a latency optimisation only: readers also poll, and a dropped
 * connection is re-opened with backoff (emitting 'reconnected' so readers catch up at once).
 */
class AppendNotifier extends node_events_1.EventEmitter {
    constructor(databaseUrl) {
        super();
        this.databaseUrl = databaseUrl;
        this.stopped = false;
        this.retryMs = 100;
        this.setMaxListeners(0);
    }
    async start() {
        this.stopped = false;
        await this.connect().catch(() => this.scheduleReconnect());
    }
    async stop() {
        this.stopped = true;
        const c = this.client;
        this.client = undefined;
        await c?.end().catch(() => undefined);
    }
    get connected() {
        return this.client !== undefined;
    }
    async connect() {
        const client = new pg_1.Client({ connectionString: this.databaseUrl });
        client.on('error', () => this.dropped(client));
        client.on('end', () => this.dropped(client));
        client.on('notification', (n) => {
            if (n.channel === event_store_1.EVENTS_CHANNEL)
                this.emit('append', n.payload ?? '');
        });
        await client.connect();
        await client.query(`LISTEN ${event_store_1.EVENTS_CHANNEL}`);
        this.client = client;
        this.retryMs = 100;
        this.emit('reconnected');
    }
    dropped(client) {
        if (this.client !== client)
            return;
        this.client = undefined;
        client.end().catch(() => undefined);
        this.scheduleReconnect();
    }
    scheduleReconnect() {
        if (this.stopped)
            return;
        const wait = this.retryMs;
        this.retryMs = Math.min(this.retryMs * 2, 5_000);
        setTimeout(() => {
            if (!this.stopped)
                this.connect().catch(() => this.scheduleReconnect());
        }, wait).unref();
    }
}
exports.AppendNotifier = AppendNotifier;
//# sourceMappingURL=append-notifier.js.map