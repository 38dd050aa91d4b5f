import { Pool, PoolClient } from 'pg';
import { ROOT_CONTEXT, SpanKind } from '@opentelemetry/api';
import { AppendNotifier } from './append-notifier';
import { ConsumerLease } from './consumer-lease';
import { EventStore, checkpointOf } from './event-store';
import { LogCheckpoint, LOG_START, StoredEvent } from './event.types';
import { backoffMs, isTransientDbError } from './transient-errors';
import { Wakeup } from './wakeup';
import { inSpan, linksOf } from './trace-context';

/** One consumer of the global log. Its writes go through `tx`, the transaction that also moves its checkpoint. */
export interface LogConsumer {
  readonly name: string;
  readonly outsideTransaction?: false;
  handle(event: StoredEvent, tx: PoolClient): Promise<void>;
  /** The batch at once, in fewer statements; must leave what handling each event in order would. */
  handleBatch?(events: StoredEvent[], tx: PoolClient): Promise<void>;
}

/**
 * A consumer whose effects are not in Postgres and are idempotent (a job enqueued by its id): no
 * transaction is opened for it, and its checkpoint moves in one statement after its batch. A
 * batch handled and then lost to another runner's move is handled again, which it allows.
 */
export interface OutsideLogConsumer {
  readonly name: string;
  readonly outsideTransaction: true;
  handle(event: StoredEvent): Promise<void>;
  /** The batch at once (what a later event of it makes unneeded can be skipped); must leave what `handle` would. */
  handleBatch?(events: StoredEvent[]): Promise<void>;
}

/** A checkpoint's move from where its runner found it to the end of a batch. */
export interface CheckpointMove {
  consumer: string;
  from: LogCheckpoint;
  to: LogCheckpoint;
}

/**
 * A consumer that writes its whole batch in one statement which also moves its checkpoint
 * (`checkpointMoveSql` as a CTE its writes depend on): one round trip a batch instead of a
 * transaction's five or more, and nothing written when another runner moved the checkpoint first.
 */
export interface SingleStatementLogConsumer {
  readonly name: string;
  readonly singleStatement: true;
  /** Applies the batch and moves the checkpoint; false when the checkpoint was not at `move.from` (nothing written). */
  applyBatch(events: StoredEvent[], db: Pick<Pool, 'query'>, move: CheckpointMove): Promise<boolean>;
  /**
   * The runner lost its chain of moves (another runner moved the checkpoint, it was rewound, or
   * an error left it unsure): anything the consumer remembers of its tables may be stale now.
   */
  forget?(): void;
}

export type AnyLogConsumer = LogConsumer | OutsideLogConsumer | SingleStatementLogConsumer;

/** Whether a move starts from LOG_START (the statement that may insert the row): a prepared statement per shape. */
export const movesFromStart = (move: CheckpointMove): boolean =>
  move.from.transactionId === LOG_START.transactionId && move.from.position === LOG_START.position;

/**
 * The compare-and-set of a checkpoint as the body of a CTE (`moved AS (…)`, one row when it
 * moved), parameters from `$<first>` on: the runner's own move and a single-statement consumer's
 * writes share it. A consumer without a row starts from LOG_START, so only a move from there may
 * insert it (of two runners inserting, the second finds the row moved); a row deleted under a
 * runner that remembers a later position (a rebuild starting over) is not brought back there.
 */
export function checkpointMoveSql(move: CheckpointMove, first = 1): { sql: string; values: unknown[] } {
  const [consumer, fromTx, fromPos, toTx, toPos] = [0, 1, 2, 3, 4].map((i) => `$${first + i}`);
  const sql = movesFromStart(move)
    ? `INSERT INTO consumer_checkpoints AS c (consumer, transaction_id, position) VALUES (${consumer}, ${toTx}::xid8, ${toPos}::bigint)
         ON CONFLICT (consumer) DO UPDATE SET transaction_id = ${toTx}::xid8, position = ${toPos}::bigint, updated_at = now()
          WHERE c.transaction_id = ${fromTx}::xid8 AND c.position = ${fromPos}::bigint
       RETURNING 1 AS moved`
    : `UPDATE consumer_checkpoints SET transaction_id = ${toTx}::xid8, position = ${toPos}::bigint, updated_at = now()
        WHERE consumer = ${consumer} AND transaction_id = ${fromTx}::xid8 AND position = ${fromPos}::bigint
       RETURNING 1 AS moved`;
  return {
    sql,
    values: [move.consumer, move.from.transactionId, move.from.position, move.to.transactionId, move.to.position],
  };
}

/**
 * The first look again after a read found events held back, doubling up to the max, for one poll
 * period: a held-back event is applied within a second of the transaction that held it back
 * ending, however long that took within the period (a look is one cheap read).
 */
const HELD_BACK_RECHECK_MS = 20;
const HELD_BACK_RECHECK_MAX_MS = 1_000;

/** What one step did: events applied, and whether the read saw committed events held back. */
interface Step {
  applied: number;
  heldBack: boolean;
}

export interface ConsumerRunnerOptions {
  batchSize?: number;
  pollMs?: number;
  maxAttempts?: number;
  /**
   * One runner of this consumer at a time across processes (ConsumerLease): the others wait,
   * trying to take over every pollMs, instead of reading and writing every batch in vain.
   */
  exclusive?: boolean;
  /**
   * How long to wait after being woken before reading: appends that follow within it share one
   * batch (one read and one write instead of one each), at the cost of that much delay.
   */
  coalesceMs?: number;
  /** the longest pause between tries after errors (default 5 s) */
  maxBackoffMs?: number;
  onError?: (err: unknown, event?: StoredEvent) => void;
}

/**
 * Feeds a consumer from the global log, at least once and in commit order. The checkpoint moves
 * by compare-and-set in the same transaction as the consumer's writes, so two runners of one
 * consumer cannot both apply a batch: the loser rolls back and re-reads. An event the consumer
 * keeps failing on goes to consumer_dead_letters after `maxAttempts` tries spaced by a growing
 * backoff, and the log moves on. Transient errors (the database away, a deadlock, a failover)
 * never count as a try: the runner backs off and reads again, however long they last.
 */
export class CheckpointedConsumerRunner {
  private running = false;
  private readonly wakeup = new Wakeup();
  private loop?: Promise<void>;
  private readonly failures = new Map<string, number>();
  /** consecutive steps that ended in an error or a failed event: how long to back off */
  private troubles = 0;
  private readonly batchSize: number;
  private readonly pollMs: number;
  /**
   * The checkpoint as this runner last read or moved it: the next batch starts there without
   * reading it again. Moving it is a compare-and-set, so a stale one (another runner moved it)
   * costs one lost batch, after which it is read again.
   */
  private known?: LogCheckpoint;
  private readonly maxAttempts: number;
  private readonly lease?: ConsumerLease;
  /** whether appends wake this runner (hearAppends) */
  private hearing = false;

  constructor(
    private readonly store: EventStore,
    private readonly consumer: AnyLogConsumer,
    private readonly notifier?: AppendNotifier,
    private readonly opts: ConsumerRunnerOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 200;
    this.pollMs = opts.pollMs ?? 1_000;
    this.maxAttempts = opts.maxAttempts ?? 3;
    if (opts.exclusive) this.lease = new ConsumerLease(store.pool, consumer.name);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.loop = this.run(); // subscribes before its first await (hearAppends), for a leased runner once it leads
  }

  async stop(): Promise<void> {
    this.running = false;
    this.hearAppends(false);
    this.poke();
    await this.loop;
    this.lease?.release();
  }

  /** Processes everything committed so far; returns how many events were applied. */
  async drain(onBatch: (applied: number) => void = () => undefined): Promise<number> {
    let total = 0;
    for (;;) {
      const n = (await this.step()).applied;
      if (n === 0) return total;
      total += n;
      onBatch(total);
    }
  }

  async checkpoint(): Promise<LogCheckpoint> {
    return this.store.consumerCheckpoint(this.consumer.name);
  }

  private readonly poke = (): void => this.wakeup.poke();

  /**
   * An exclusive runner hears appends only while it leads: the notifier then holds no LISTEN
   * connection in a standby process, and Postgres delivers each append to one worker, not all.
   */
  private hearAppends(on: boolean): void {
    if (!this.notifier || on === this.hearing) return;
    this.hearing = on;
    const method = on ? 'on' : 'off';
    this.notifier[method]('append', this.poke);
    this.notifier[method]('reconnected', this.poke);
  }

  /** A backoff that stop() cuts short (appends do not: they would turn it into a busy loop). */
  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      const check = setInterval(() => !this.running && done(), 50);
      function done() {
        clearTimeout(timer);
        clearInterval(check);
        resolve();
      }
    });
  }

  private async run(): Promise<void> {
    // consecutive reads that found committed events held back behind an older open transaction
    // (the log is read below the oldest): the runner looks again soon, since the announcements
    // of those events have come and gone
    let heldBack = 0;
    let heldSince = 0;
    while (this.running) {
      let step: Step = { applied: 0, heldBack: false };
      this.wakeup.reset();
      try {
        if (this.lease && !(await this.lease.held())) {
          // another process leads: what this one kept may be stale by the time it takes over
          this.hearAppends(false);
          this.loseTrack();
          await this.pause(this.pollMs);
          continue;
        }
        if (this.running) this.hearAppends(true);
        step = await this.step();
      } catch (e) {
        this.opts.onError?.(e);
        this.troubles++;
      }
      if (this.troubles > 0 && this.running) await this.pause(backoffMs(this.troubles, this.opts.maxBackoffMs));
      // a batch short of full took all there was: wait for the next append (one during the batch
      // wakes at once); a quiet poll period reads the stored checkpoint again, in case it was moved
      // from outside (rewound to replay the log)
      else if (step.applied < this.batchSize && this.running) {
        heldBack = step.heldBack ? heldBack + 1 : 0;
        if (heldBack === 1) heldSince = Date.now();
        const recheckMs = Math.min(HELD_BACK_RECHECK_MAX_MS, HELD_BACK_RECHECK_MS * 2 ** (heldBack - 1));
        const rechecking = heldBack > 0 && Date.now() - heldSince + recheckMs < this.pollMs;
        const woken = await this.wakeup.wait(rechecking ? recheckMs : this.pollMs);
        if (!woken && !rechecking) this.loseTrack();
        // woken by an append: let the appends right behind it land, to read them in the same batch
        else if (woken && this.opts.coalesceMs) await new Promise((r) => setTimeout(r, this.opts.coalesceMs));
      }
    }
  }

  /** One batch: applied in a single transaction, or one event at a time when the batch fails. */
  private async step(): Promise<Step> {
    try {
      return await this.stepFromKnown();
    } catch (e) {
      this.loseTrack(); // whatever went wrong, start the next step from the stored checkpoint
      throw e;
    }
  }

  /** The next step reads the stored checkpoint again, and the consumer forgets what it kept of its tables. */
  private loseTrack(): void {
    this.known = undefined;
    if ('forget' in this.consumer) this.consumer.forget?.();
  }

  private async stepFromKnown(): Promise<Step> {
    const from = (this.known ??= await this.checkpoint());
    const { events: batch, heldBack } = await this.store.readTail({ after: from, limit: this.batchSize });
    if (batch.length === 0) {
      this.troubles = 0;
      return { applied: 0, heldBack };
    }
    return { applied: await this.applyRead(from, batch), heldBack };
  }

  private async applyRead(from: LogCheckpoint, batch: StoredEvent[]): Promise<number> {
    try {
      return await this.apply(from, batch);
    } catch (e) {
      if (e instanceof CheckpointMoved) {
        this.loseTrack();
        return 0;
      }
      if (isTransientDbError(e)) throw e; // the database, not the batch: back off and read again
      if (batch.length === 1) return this.failed(from, batch[0], e);
      return this.applyOneByOne(from, batch);
    }
  }

  private async applyOneByOne(from: LogCheckpoint, batch: StoredEvent[]): Promise<number> {
    let at = from;
    for (const event of batch) {
      try {
        await this.apply(at, [event]);
      } catch (e) {
        if (e instanceof CheckpointMoved) {
          this.loseTrack();
          return 0;
        }
        if (isTransientDbError(e)) throw e;
        return this.failed(at, event, e);
      }
      at = checkpointOf(event);
    }
    return batch.length;
  }

  /**
   * One span a batch (`consume <consumer>`), its own trace, linked to the traces of the events in
   * it: a batch serves many turns, so it belongs to none of them.
   */
  private apply(from: LogCheckpoint, events: StoredEvent[]): Promise<number> {
    const attributes = { 'parley.consumer': this.consumer.name, 'parley.events.count': events.length };
    const opts = { kind: SpanKind.CONSUMER, attributes, parent: ROOT_CONTEXT };
    return inSpan(`consume ${this.consumer.name}`, opts, (span) => {
      if (span.isRecording()) span.addLinks(linksOf(events));
      return this.applyBatch(from, events);
    });
  }

  private async applyBatch(from: LogCheckpoint, events: StoredEvent[]): Promise<number> {
    const to = checkpointOf(events[events.length - 1]);
    const consumer = this.consumer;
    if ('singleStatement' in consumer) {
      const moved = await consumer.applyBatch(events, this.store.pool, { consumer: consumer.name, from, to });
      if (!moved) throw new CheckpointMoved();
    } else if (consumer.outsideTransaction) {
      if (consumer.handleBatch) await consumer.handleBatch(events);
      else for (const event of events) await consumer.handle(event);
      await this.moveCheckpoint(this.store.pool, from, to);
    } else {
      await this.store.withTransaction(async (tx) => {
        if (consumer.handleBatch) await consumer.handleBatch(events, tx);
        else for (const event of events) await consumer.handle(event, tx);
        await this.moveCheckpoint(tx, from, to);
      });
    }
    this.known = to;
    for (const event of events) this.failures.delete(event.id);
    this.troubles = 0;
    return events.length;
  }

  private async failed(at: LogCheckpoint, event: StoredEvent, err: unknown): Promise<number> {
    this.opts.onError?.(err, event);
    const attempts = (this.failures.get(event.id) ?? 0) + 1;
    this.failures.set(event.id, attempts);
    this.troubles = attempts;
    if (attempts < this.maxAttempts) return 0;
    await this.store
      .withTransaction(async (tx) => {
        await tx.query(
          `INSERT INTO consumer_dead_letters (consumer, event_id, position, attempts, error)
           VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
          [this.consumer.name, event.id, event.position, attempts, String((err as Error)?.stack ?? err)],
        );
        await this.moveCheckpoint(tx, at, checkpointOf(event));
      })
      .then(
        () => (this.known = checkpointOf(event)),
        (e) => {
          if (!(e instanceof CheckpointMoved)) throw e;
          this.loseTrack();
        },
      );
    this.failures.delete(event.id);
    this.troubles = 0;
    return 1;
  }

  /** Compare-and-set in one statement (checkpointMoveSql): the checkpoint moves only from `from`. */
  private async moveCheckpoint(db: Pick<Pool, 'query'>, from: LogCheckpoint, to: LogCheckpoint): Promise<void> {
    const move = { consumer: this.consumer.name, from, to };
    const { sql, values } = checkpointMoveSql(move);
    const moved = await db.query({
      name: movesFromStart(move) ? 'parley_start_checkpoint' : 'parley_move_checkpoint',
      text: `WITH moved AS (${sql}) SELECT count(*)::int AS n FROM moved`,
      values,
    });
    if (moved.rows[0].n !== 1) throw new CheckpointMoved();
  }
}

/** Another runner of the same consumer advanced the checkpoint first. */
class CheckpointMoved extends Error {}
