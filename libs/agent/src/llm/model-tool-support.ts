import { Logger } from '@nestjs/common';
import { Pool } from 'pg';
import { PriceTable } from './price-table';

/**
 * Which models answer with tool use: all but those the model table marks `tools: false`, and
 * those a provider refused tools for (learned from the refusal, kept in `model_tool_refusals`
 * so that every worker, now and after a restart, knows it without paying for another refusal).
 */
export class ModelToolSupport {
  private readonly logger = new Logger(ModelToolSupport.name);
  private readonly refused = new Set<string>();

  constructor(
    private readonly pool: Pool,
    private readonly table: PriceTable,
  ) {}

  /** The refusals recorded so far, read at boot. */
  async load(): Promise<void> {
    const { rows } = await this.pool.query<{ model: string }>('SELECT model FROM model_tool_refusals');
    for (const r of rows) this.refused.add(r.model);
  }

  /** What this process knows now (the plan of a turn asks it, synchronously). */
  supports(model: string): boolean {
    return this.table.toolsOf(model) && !this.refused.has(model);
  }

  /** Before a call offering tools: whether another worker has learned meanwhile that the model has none. */
  async stillSupports(model: string): Promise<boolean> {
    if (!this.supports(model)) return false;
    const { rowCount } = await this.pool.query('SELECT 1 FROM model_tool_refusals WHERE model = $1', [model]);
    if (rowCount) this.refused.add(model);
    return !rowCount;
  }

  /** The provider refused tools for the model: recorded once, for every worker. */
  async learnRefusal(model: string, message: string): Promise<void> {
    if (this.refused.has(model)) return;
    this.refused.add(model);
    this.logger.warn(
      `model ${model} refused tool use (${message}): its turns with a book now search first (always-retrieve)`,
    );
    await this.pool.query(
      'INSERT INTO model_tool_refusals (model, message) VALUES ($1, $2) ON CONFLICT (model) DO NOTHING',
      [model, message.slice(0, 2000)],
    );
  }
}
