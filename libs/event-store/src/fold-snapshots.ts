import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';

/** A fold's state at a version of its stream, as `encodeState` wrote it. */
export interface FoldSnapshot {
  version: number;
  stateJson: string;
}

/** The `fold_snapshots` table: the latest snapshot of each stream per fold. */
@Injectable()
export class FoldSnapshots {
  constructor(@Inject(Pool) private readonly pool: Pick<Pool, 'query'>) {}

  async latest(streamId: string, fold: string): Promise<FoldSnapshot | undefined> {
    const { rows } = await this.pool.query<{ version: number; state_json: string }>({
      name: 'parley_fold_snapshot',
      text: 'SELECT version, state_json FROM fold_snapshots WHERE stream_id = $1 AND fold = $2',
      values: [streamId, fold],
    });
    return rows[0] && { version: rows[0].version, stateJson: rows[0].state_json };
  }

  /** Keeps this snapshot unless a later one is kept already (two processes may take one at once). */
  async save(streamId: string, fold: string, snapshot: FoldSnapshot): Promise<void> {
    await this.pool.query({
      name: 'parley_save_fold_snapshot',
      text: `INSERT INTO fold_snapshots (stream_id, fold, version, state_json) VALUES ($1, $2, $3, $4)
             ON CONFLICT (stream_id, fold) DO UPDATE
               SET version = EXCLUDED.version, state_json = EXCLUDED.state_json, taken_at = now()
               WHERE fold_snapshots.version < EXCLUDED.version`,
      values: [streamId, fold, snapshot.version, snapshot.stateJson],
    });
  }
}
