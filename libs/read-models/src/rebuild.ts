import { CheckpointedConsumerRunner, EventStore } from '@parley/event-store';
import { ConversationsProjection, READ_MODELS_CONSUMER } from './conversations.projection';

/**
 * Drops the read models and replays the whole log into them. Live runners may keep going:
 * the checkpoint compare-and-set keeps every event applied once.
 */
export async function rebuildReadModels(
  store: EventStore,
  onProgress: (applied: number, total: number) => void = () => undefined,
): Promise<{ events: number; ms: number }> {
  const started = performance.now();
  await store.withTransaction(async (tx) => {
    await tx.query('LOCK TABLE consumer_checkpoints IN SHARE ROW EXCLUSIVE MODE');
    // the usage ledger is not a view of the log: erased conversations' spending is only there
    await tx.query('TRUNCATE messages, conversations');
    await tx.query('DELETE FROM consumer_checkpoints WHERE consumer = $1', [READ_MODELS_CONSUMER]);
    await tx.query('DELETE FROM consumer_dead_letters WHERE consumer = $1', [READ_MODELS_CONSUMER]);
  });
  const total = await store.count();
  const runner = new CheckpointedConsumerRunner(store, new ConversationsProjection(), undefined, { batchSize: 1000 });
  const applied = await runner.drain((n) => onProgress(n, total));
  return { events: applied, ms: performance.now() - started };
}
