import { Injectable, Optional } from '@nestjs/common';
import { EventStore } from '@parley/event-store';
import { ReadReplica } from '@parley/platform';
import { StreamFrame, toStreamFrame } from './stream-frame';

/** Events read per statement, by the hub's readers and by subscribers catching up alike. */
export const PAGE_SIZE = 200;

/** The queries the stream hub makes: pages of one stream, and the current versions of many. */
@Injectable()
export class StreamReads {
  constructor(
    private readonly store: EventStore,
    @Optional() private readonly replica?: ReadReplica,
  ) {}

  /** Up to PAGE_SIZE events with version > after, oldest first, as frames, from the primary. */
  async page(streamId: string, after: number): Promise<StreamFrame[]> {
    const events = await this.store.readStream(streamId, { after, limit: PAGE_SIZE });
    return events.map(toStreamFrame);
  }

  /**
   * A subscriber's catch-up page: from the replica where there is one (the bulk of a long
   * history), and what a lagging replica lacks up to `head` from the primary. Both read
   * "versions > cursor, in order", which has no gap on either server, so the join has no gap and
   * no repeat. A replica that fails the read is skipped.
   */
  async catchUpPage(streamId: string, after: number, head: number | undefined): Promise<StreamFrame[]> {
    if (!this.replica?.configured) return this.page(streamId, after);
    const fromReplica = await this.store
      .readStream(streamId, { after, limit: PAGE_SIZE }, this.replica.laggingPool)
      .then((events) => events.map(toStreamFrame))
      .catch(() => [] as StreamFrame[]);
    const last = fromReplica.at(-1)?.version ?? after;
    if (fromReplica.length === PAGE_SIZE || (head !== undefined && last >= head)) return fromReplica;
    return [...fromReplica, ...(await this.page(streamId, last))];
  }

  /** The version of each stream (0 for a stream without events). */
  versions(streamIds: string[]): Promise<Map<string, number>> {
    return this.store.versions(streamIds);
  }
}
