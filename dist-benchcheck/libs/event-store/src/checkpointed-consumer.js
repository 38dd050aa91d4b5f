"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.CheckpointedConsumerRunner = void 0;
const event_store_1 = require("./event-store");
const event_types_1 = require("./event.types");
const wakeup_1 = require("./wakeup");
/**
 * Feeds a consumer from the global log, at least once and in commit order. The checkpoint moves
 * by compare-and-set in the same transaction as the consumer's writes, so two runners of one
 * consumer cannot both apply a batch: the loser rolls back and re-reads. An event the consumer
 * keeps failing on goes to consumer_dead_letters after `maxAttempts`, and the log moves on.
 */
class CheckpointedConsumerRunner {
    constructor(store, consumer, notifier, opts = {}) {
        this.store = store;
        this.consumer = consumer;
        this.notifier = notifier;
        this.opts = opts;
        this.running = false;
        this.wakeup = new wakeup_1.Wakeup();
        this.failures = new Map();
        this.poke = () => this.wakeup.poke();
        this.batchSize = opts.batchSize ?? 200;
        this.pollMs = opts.pollMs ?? 1_000;
        this.maxAttempts = opts.maxAttempts ?? 3;
    }
    start() {
        if (this.running)
            return;
        this.running = true;
        this.notifier?.on('append', this.poke);
        this.notifier?.on('reconnected', this.poke);
        this.loop = this.run();
    }
    async stop() {
        this.running = false;
        this.notifier?.off('append', this.poke);
        this.notifier?.off('reconnected', this.poke);
        this.poke();
        await this.loop;
    }
    /** Processes everything committed so far; returns how many events were applied. */
    async drain(onBatch = () => undefined) {
        let total = 0;
        for (;;) {
            const n = await this.step();
            if (n === 0)
                return total;
            total += n;
            onBatch(total);
        }
    }
    async checkpoint() {
        const { rows } = await this.store.pool.query('SELECT transaction_id::text AS transaction_id, position::text AS position FROM consumer_checkpoints WHERE consumer = $1', [this.consumer.name]);
        return rows[0] ? { transactionId: rows[0].transaction_id, position: rows[0].position } : event_types_1.LOG_START;
    }
    async run() {
        while (this.running) {
            let applied = 0;
            this.wakeup.reset();
            try {
                applied = await this.step();
            }
            catch (e) {
                this.opts.onError?.(e);
            }
            if (applied === 0 && this.running)
                await this.wakeup.wait(this.pollMs);
        }
    }
    /** One batch: applied in a single transaction, or one event at a time when the batch fails. */
    async step() {
        const from = await this.checkpoint();
        const batch = await this.store.readAll({ after: from, limit: this.batchSize });
        if (batch.length === 0)
            return 0;
        try {
            return await this.apply(from, batch);
        }
        catch (e) {
            if (e instanceof CheckpointMoved)
                return 0;
            if (batch.length === 1)
                return this.failed(from, batch[0], e);
            return this.applyOneByOne(from, batch);
        }
    }
    async applyOneByOne(from, batch) {
        let at = from;
        for (const event of batch) {
            try {
                await this.apply(at, [event]);
            }
            catch (e) {
                if (e instanceof CheckpointMoved)
                    return 0;
                return this.failed(at, event, e);
            }
            at = (0, event_store_1.checkpointOf)(event);
        }
        return batch.length;
    }
    async apply(from, events) {
        await this.store.withTransaction(async (tx) => {
            for (const event of events)
                await this.consumer.handle(event, tx);
            await this.moveCheckpoint(tx, from, (0, event_store_1.checkpointOf)(events[events.length - 1]));
        });
        for (const event of events)
            this.failures.delete(event.id);
        return events.length;
    }
    async failed(at, event, err) {
        this.opts.onError?.(err, event);
        const attempts = (this.failures.get(event.id) ?? 0) + 1;
        this.failures.set(event.id, attempts);
        if (attempts < this.maxAttempts)
            return 0;
        await this.store
            .withTransaction(async (tx) => {
            await tx.query(`INSERT INTO consumer_dead_letters (consumer, event_id, position, attempts, error)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, [this.consumer.name, event.id, event.position, attempts, String(err?.stack ?? err)]);
            await this.moveCheckpoint(tx, at, (0, event_store_1.checkpointOf)(event));
        })
            .catch((e) => {
            if (!(e instanceof CheckpointMoved))
                throw e;
        });
        this.failures.delete(event.id);
        return 1;
    }
    async moveCheckpoint(tx, from, to) {
        await tx.query('INSERT INTO consumer_checkpoints (consumer) VALUES ($1) ON CONFLICT DO NOTHING', [
            this.consumer.name,
        ]);
        const moved = await tx.query(`UPDATE consumer_checkpoints SET transaction_id = $4::xid8, position = $5, updated_at = now()
        WHERE consumer = $1 AND transaction_id = $2::xid8 AND position = $3`, [this.consumer.name, from.transactionId, from.position, to.transactionId, to.position]);
        if (moved.rowCount !== 1)
            throw new CheckpointMoved();
    }
}
exports.CheckpointedConsumerRunner = CheckpointedConsumerRunner;
/** Another runner of the same consumer advanced the checkpoint first. */
class CheckpointMoved extends Error {
}
//# sourceMappingURL=checkpointed-consumer.js.map