/**
 * `projections rebuild`: an admin tool on the database of DATABASE_URL, not a client of the API:
 * drops the read models and replays the log into them, with a progress bar.
 */
import { Presets, SingleBar } from 'cli-progress';
import { Pool } from 'pg';
import { loadDatabaseUrl } from '@parley/config';
import { EventStore } from '@parley/event-store';
import { rebuildReadModels } from '@parley/read-models';

export async function rebuildProjections(): Promise<void> {
  const pool = new Pool({ connectionString: loadDatabaseUrl() });
  const bar = new SingleBar(
    { format: 'rebuilding read models [{bar}] {value}/{total} events' },
    Presets.shades_classic,
  );
  try {
    bar.start(0, 0);
    const { events, ms } = await rebuildReadModels(new EventStore(pool), (applied, total) => {
      bar.setTotal(total);
      bar.update(applied);
    });
    bar.stop();
    console.log(`${events} events in ${(ms / 1000).toFixed(2)} s (${Math.round(events / (ms / 1000))} events/s)`);
  } finally {
    bar.stop();
    await pool.end();
  }
}
