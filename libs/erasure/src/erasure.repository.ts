import { Inject, Injectable } from '@nestjs/common';
import { Pool } from 'pg';
import { randomUUID } from 'node:crypto';
import { ErasureSubject } from '@parley/conversation';
import { erasedStreamSql } from '@parley/read-models';
import type { JournalEntry } from './erasure-journal';

/** A BullMQ job that held erased data, by queue and id. */
export interface JobRef {
  queue: string;
  jobId: string;
}

/** The erasure's own SQL: its audit, the read-model rows it drops, and the Redis jobs still to remove. */
@Injectable()
export class ErasureRepository {
  constructor(@Inject(Pool) private readonly pool: Pick<Pool, 'query'>) {}

  /** Opens the audit record of a request; its id goes into the tombstones it leaves. */
  async begin(subject: ErasureSubject, subjectId: string, requestedBy: string | null): Promise<string> {
    const id = randomUUID();
    await this.pool.query('INSERT INTO erasures (id, subject, subject_id, requested_by) VALUES ($1, $2, $3, $4)', [
      id,
      subject,
      subjectId,
      requestedBy,
    ]);
    return id;
  }

  /**
   * Opens (or reopens) the audit record of an erasure done again from the journal, with its own
   * id and request; it says when it was replayed.
   */
  async beginReplay(entry: JournalEntry): Promise<void> {
    await this.pool.query(
      `INSERT INTO erasures (id, subject, subject_id, requested_by, requested_at, replayed_at)
       VALUES ($1, $2, $3, $4, $5, now())
       ON CONFLICT (id) DO UPDATE SET replayed_at = now()`,
      [entry.id, entry.subject, entry.subjectId, entry.requestedBy, entry.at.toISOString()],
    );
  }

  /** Of these erasures, the ids this database shows completed. */
  async completedOf(ids: string[]): Promise<Set<string>> {
    const { rows } = await this.pool.query<{ id: string }>(
      'SELECT id FROM erasures WHERE id = ANY($1::uuid[]) AND completed_at IS NOT NULL',
      [ids],
    );
    return new Set(rows.map((r) => r.id));
  }

  /** Completed erasures not yet in the journal, oldest first. */
  async unjournaled(limit: number): Promise<JournalEntry[]> {
    const { rows } = await this.pool.query<{
      id: string;
      subject: ErasureSubject;
      subject_id: string;
      requested_by: string | null;
      requested_at: Date;
    }>(
      `SELECT id, subject, subject_id, requested_by, requested_at FROM erasures
        WHERE completed_at IS NOT NULL AND journaled_at IS NULL ORDER BY completed_at LIMIT $1`,
      [limit],
    );
    return rows.map((r) => ({
      id: r.id,
      subject: r.subject,
      subjectId: r.subject_id,
      requestedBy: r.requested_by,
      at: r.requested_at,
    }));
  }

  async journaled(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.pool.query('UPDATE erasures SET journaled_at = now() WHERE id = ANY($1::uuid[])', [ids]);
  }

  /** Completes the record; what the journal keeps of it. */
  async complete(id: string, erased: { streams: number; events: number }): Promise<JournalEntry | undefined> {
    const { rows } = await this.pool.query<{
      subject: ErasureSubject;
      subject_id: string;
      requested_by: string | null;
      requested_at: Date;
    }>(
      `UPDATE erasures SET completed_at = now(), streams_erased = $2, events_erased = $3 WHERE id = $1
       RETURNING subject, subject_id, requested_by, requested_at`,
      [id, erased.streams, erased.events],
    );
    const r = rows[0];
    return r && { id, subject: r.subject, subjectId: r.subject_id, requestedBy: r.requested_by, at: r.requested_at };
  }

  /** Erasure records of this subject still open this long after they were opened: ones a crash broke off. */
  async unfinished(subject: ErasureSubject, olderThan: string): Promise<Array<{ id: string; subjectId: string }>> {
    const { rows } = await this.pool.query<{ id: string; subject_id: string }>(
      `SELECT id, subject_id FROM erasures
        WHERE completed_at IS NULL AND subject = $1 AND requested_at < now() - $2::interval
        ORDER BY requested_at LIMIT 100`,
      [subject, olderThan],
    );
    return rows.map((r) => ({ id: r.id, subjectId: r.subject_id }));
  }

  /** A request that found nothing to erase leaves no record. */
  async discard(id: string): Promise<void> {
    await this.pool.query('DELETE FROM erasures WHERE id = $1', [id]);
  }

  /** Read-model rows of the conversation (its messages go with it). */
  async deleteReadModels(conversationId: string): Promise<void> {
    await this.pool.query('DELETE FROM conversations WHERE id = $1', [conversationId]);
  }

  async addPendingJobs(jobs: JobRef[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.pool.query(
      `INSERT INTO erasure_pending_jobs (queue, job_id)
       SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT DO NOTHING`,
      [jobs.map((j) => j.queue), jobs.map((j) => j.jobId)],
    );
  }

  async pendingJobs(limit: number): Promise<JobRef[]> {
    const { rows } = await this.pool.query<{ queue: string; job_id: string }>(
      'SELECT queue, job_id FROM erasure_pending_jobs ORDER BY since LIMIT $1',
      [limit],
    );
    return rows.map((r) => ({ queue: r.queue, jobId: r.job_id }));
  }

  async jobsRemoved(jobs: JobRef[]): Promise<void> {
    if (jobs.length === 0) return;
    await this.pool.query(
      `DELETE FROM erasure_pending_jobs p USING unnest($1::text[], $2::text[]) AS r(queue, job_id)
        WHERE p.queue = r.queue AND p.job_id = r.job_id`,
      [jobs.map((j) => j.queue), jobs.map((j) => j.jobId)],
    );
  }

  /**
   * Fold snapshots written after their stream was erased, by a process that had folded it just
   * before (a snapshot is saved without waiting): removed by the sweep.
   */
  /** Fold snapshots of these streams, whatever version they hold (one saved from a fold read before a redaction). */
  async deleteSnapshotsOf(streamIds: string[]): Promise<void> {
    await this.pool.query('DELETE FROM fold_snapshots WHERE stream_id = ANY($1::text[])', [streamIds]);
  }

  async deleteLateSnapshots(): Promise<number> {
    const { rowCount } = await this.pool.query(`DELETE FROM fold_snapshots s WHERE ${erasedStreamSql('s.stream_id')}`);
    return rowCount ?? 0;
  }
}
