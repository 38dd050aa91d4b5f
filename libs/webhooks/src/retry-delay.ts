import { WebhooksConfig } from '@parley/config';

/**
 * The pause after a delivery's `attempt`-th failed try: the base doubled per try before it, up
 * to the max, with ±20 % jitter so that deliveries failing together do not retry together.
 */
export function retryDelayMs(
  attempt: number,
  config: Pick<WebhooksConfig, 'retryBaseMs' | 'retryMaxMs'>,
  random = Math.random,
): number {
  const exponential = Math.min(config.retryMaxMs, config.retryBaseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exponential * (0.8 + 0.4 * random()));
}
