import { Module } from '@nestjs/common';
import { RateLimits } from './rate-limits';
import { StreamSlots } from './stream-slots';

/** Each reader's limits: requests a minute (RateLimits) and streams open at once (StreamSlots). */
@Module({
  providers: [RateLimits, StreamSlots],
  exports: [RateLimits, StreamSlots],
})
export class RateLimitsModule {}
