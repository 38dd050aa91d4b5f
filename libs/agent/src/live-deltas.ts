import { Inject, Injectable } from '@nestjs/common';
import { AppConfig, CONFIG } from '@parley/config';
import { LiveChannels, RedisConnections } from '@parley/platform';
import type { AssistantTextDelta } from '@parley/conversation';

/**
 * The reply a worker is writing, as token deltas on a channel per conversation, so an SSE client
 * on any API replica sees the text a worker on any machine is writing (the `AssistantTextDelta` frames).
 */
@Injectable()
export class LiveDeltas extends LiveChannels<AssistantTextDelta> {
  constructor(redis: RedisConnections, @Inject(CONFIG) config: AppConfig) {
    super(redis, config, 'deltas');
  }
}
