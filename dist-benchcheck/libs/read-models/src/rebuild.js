"use strict";
Object.defineProperty(exports, "__esModule", { value: true });
exports.rebuildReadModels = rebuildReadModels;
const event_store_1 = require("@parley/event-store");
const conversations_projection_1 = require("./conversations.projection");
/**
 * Drops the read models and replays the whole log into them. Live runners may keep going:
 * the checkpoint compare-and-set keeps every event applied once.
 */
async function rebuildReadModels(store, onProgress = () => undefined) {
    const started = performance.now();
    await store.withTransaction(async (tx) => {
        await tx.query('LOCK TABLE consumer_checkpoints IN SHARE ROW EXCLUSIVE MODE');
        await tx.query('TRUNCATE messages, conversations');
        await tx.query('DELETE FROM consumer_checkpoints WHERE consumer = $1', [conversations_projection_1.READ_MODELS_CONSUMER]);
        await tx.query('DELETE FROM consumer_dead_letters WHERE consumer = $1', [conversations_projection_1.READ_MODELS_CONSUMER]);
    });
    const { rows } = await store.pool.query('SELECT count(*) AS n FROM events');
    const total = Number(rows[0].n);
    const runner = new event_store_1.CheckpointedConsumerRunner(store, new conversations_projection_1.ConversationsProjection(), undefined, { batchSize: 1000 });
    const applied = await runner.drain((n) => onProgress(n, total));
    return { events: applied, ms: performance.now() - started };
}
//# sourceMappingURL=rebuild.js.map