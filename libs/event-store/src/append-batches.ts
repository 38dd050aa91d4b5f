import { context, Context, Span, trace } from '@opentelemetry/api';
import { Pool } from 'pg';
import {
  APPEND_ANNOUNCED_SQL,
  APPEND_MANY_SQL,
  appendDocs,
  AppendOutcome,
  AppendRow,
  oneStreamOutcome,
} from './append-statements';
import { EventRow } from './event-rows';
import { queryKeepingConnection } from './transaction';

/** Statements of appends in flight at once, per process: what waits meanwhile goes in the next. */
export const APPEND_LANES = 2;
/** Appends one statement carries at most (its JSON parameter stays well under a megabyte). */
const MAX_APPENDS_A_STATEMENT = 64;

/** A stream's events to append after a version (null: after whatever is there). */
export interface AppendRequest {
  streamId: string;
  expectedVersion: number | null;
  /** the events as the statements take them (appendDocs) */
  events: ReturnType<typeof appendDocs>;
}

interface Waiting extends AppendRequest {
  resolve(outcome: AppendOutcome): void;
  reject(error: unknown): void;
  /** the caller's trace context and its append span, when it has one */
  context: Context;
  span?: Span;
}

type AppendManyRow = AppendRow & { append_ord: string };

/**
 * Group commit for the appends of one process: at most APPEND_LANES statements in flight, and the
 * appends that arrive meanwhile go together in the next one, each stream's expected version
 * checked on its own. One statement, one transaction and one WAL flush for all of them, where one
 * each made 16 writers trail a raw INSERT. Each statement announces its streams (with the events
 * when they fit) as it commits. A statement that one append fails (a lost race, a retried event
 * id, data Postgres refuses) is run again one append at a time, so each caller gets its own
 * answer.
 */
export class AppendBatches {
  private waiting: Waiting[] = [];
  /** streams with an append in a statement in flight: their next append waits for its answer */
  private readonly streamsInFlight = new Set<string>();
  private statementsInFlight = 0;

  constructor(private readonly pool: Pool) {}

  append(request: AppendRequest): Promise<AppendOutcome> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ ...request, resolve, reject, context: context.active(), span: trace.getActiveSpan() });
      this.startStatements();
    });
  }

  private startStatements(): void {
    while (this.statementsInFlight < APPEND_LANES) {
      const batch = this.takeBatch();
      if (batch.length === 0) return;
      this.statementsInFlight++;
      for (const a of batch) {
        this.streamsInFlight.add(a.streamId);
        a.span?.setAttribute('parley.append.statement_appends', batch.length);
      }
      // the statement's own span (pg's) goes in its first append's trace, not in whichever
      // trace the statement before it was started from
      void context
        .with(batch[0].context, () => this.run(batch))
        .finally(() => {
          this.statementsInFlight--;
          batch.forEach((a) => this.streamsInFlight.delete(a.streamId));
          this.startStatements();
        });
    }
  }

  /**
   * The waiting appends, oldest first, one per stream and none of a stream in flight: two appends
   * of one stream in a statement would both be decided on the version before it.
   */
  private takeBatch(): Waiting[] {
    const batch: Waiting[] = [];
    const left: Waiting[] = [];
    const streams = new Set<string>();
    for (const a of this.waiting) {
      const free = !streams.has(a.streamId) && !this.streamsInFlight.has(a.streamId);
      if (free && batch.length < MAX_APPENDS_A_STATEMENT) {
        batch.push(a);
        streams.add(a.streamId);
      } else left.push(a);
    }
    this.waiting = left;
    return batch;
  }

  private async run(batch: Waiting[]): Promise<void> {
    try {
      const outcomes = await this.statement(batch);
      batch.forEach((a, i) => a.resolve(outcomes[i]));
    } catch (e) {
      if (batch.length > 1 && isOneAppendsFault(e)) {
        await Promise.all(batch.map((a) => this.statement([a]).then(([outcome]) => a.resolve(outcome), a.reject)));
      } else batch.forEach((a) => a.reject(e));
    }
  }

  private async statement(batch: AppendRequest[]): Promise<AppendOutcome[]> {
    return batch.length === 1 ? [await this.alone(batch[0])] : this.together(batch);
  }

  /** One append, in the statement made for one stream (a little cheaper to run than the other). */
  private async alone({ streamId, expectedVersion, events }: AppendRequest): Promise<AppendOutcome> {
    // a lost race is this statement's unique violation: the connection stays in the pool
    const { rows } = await queryKeepingConnection<AppendRow>(this.pool, {
      name: 'parley_append_announced',
      text: APPEND_ANNOUNCED_SQL,
      values: [streamId, expectedVersion, JSON.stringify(events)],
    });
    return oneStreamOutcome(rows);
  }

  private async together(batch: AppendRequest[]): Promise<AppendOutcome[]> {
    const appends = batch.map(({ streamId, expectedVersion, events }) => ({ streamId, expectedVersion, events }));
    const { rows } = await queryKeepingConnection<AppendManyRow>(this.pool, {
      name: 'parley_append_many',
      text: APPEND_MANY_SQL,
      values: [JSON.stringify(appends)],
    });
    const outcomes: AppendOutcome[] = batch.map(() => ({ currentVersion: 0, inserted: [] }));
    for (const row of rows) {
      const outcome = outcomes[Number(row.append_ord) - 1];
      outcome.currentVersion = row.current_version;
      if (row.event_id != null) outcome.inserted.push(row as EventRow);
    }
    return outcomes;
  }
}

/**
 * What one append can make its statement fail by (a conflict: a lost race, a retried event id, a
 * deadlock; data Postgres refuses, such as a NUL in a string): the others must not fail with it.
 */
function isOneAppendsFault(e: unknown): boolean {
  const code = (e as { code?: string })?.code ?? '';
  return code.length === 5 && ['22', '23', '40'].includes(code.slice(0, 2));
}
