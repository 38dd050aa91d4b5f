import { Global, Module } from '@nestjs/common';
import { AppConfig, CONFIG, ConfigError, LlmConfig } from '@parley/config';
import { PriceTable } from './price-table';
import { priceTableWith } from './pricing';

/** The process's PriceTable: the shipped prices with LLM_PRICES over them. */
export const MODEL_TABLE = 'MODEL_TABLE';

/**
 * The model table of the process, built and checked as it boots; global, so that what prices,
 * routes or budgets calls in any module (books' contextual retrieval too) is handed the one table.
 * The API's and the worker's root modules import it.
 */
@Global()
@Module({
  providers: [{ provide: MODEL_TABLE, inject: [CONFIG], useFactory: (config: AppConfig) => modelTableOf(config) }],
  exports: [MODEL_TABLE],
})
export class ModelTableModule {}

/**
 * The deployment's models at boot: LLM_PRICES put over the shipped prices, and the models it
 * answers with checked. LLM_MODEL, LLM_SUMMARY_MODEL and each of POLICY_MODELS must be priced and
 * run on a provider the deployment talks to (LLM_PROVIDERS), else boot stops: nothing is ever
 * recorded as free by mistake. The scripted stand-in answers every call itself, so it checks nothing.
 */
export function modelTableOf({ llm }: Pick<AppConfig, 'llm'>): PriceTable {
  const table = priceTableWith(llm.prices);
  if (llm.provider === 'scripted') return table;
  const problems = [
    ['LLM_MODEL', llm.model],
    ['LLM_SUMMARY_MODEL', llm.summaryModel],
    ...(llm.policyModels === '*' ? [] : llm.policyModels.map((m) => ['POLICY_MODELS', m])),
  ].flatMap(([name, model]) => {
    const refusal = model === undefined ? undefined : modelRefusal(model, llm, table);
    return refusal ? [`  ${name}: ${refusal}`] : [];
  });
  if (problems.length) throw new ConfigError(`Invalid environment:\n${problems.join('\n')}`);
  return table;
}

/**
 * Whether the operator lets readers pick `model` for a conversation (POLICY_MODELS; its own
 * LLM_MODEL always): a reader never chooses a dearer model than the operator listed.
 */
export function modelAllowedToReaders(model: string, llm: Pick<LlmConfig, 'model' | 'policyModels'>): boolean {
  return model === llm.model || llm.policyModels === '*' || llm.policyModels.includes(model);
}

/**
 * Why a conversation may not run on `model` (its `policy.model`), or undefined when it may: the
 * model must be priced, and its provider one this deployment talks to.
 */
export function modelRefusal(
  model: string,
  llm: Pick<LlmConfig, 'provider' | 'providers'>,
  table: PriceTable,
): string | undefined {
  const price = table.priceOf(model);
  if (!price)
    return `unknown model ${model}: it has no price (the shipped table or LLM_PRICES names models by exact id or an explicit pattern)`;
  // the scripted stand-in answers for any priced model
  if (llm.provider === 'scripted') return undefined;
  if (!(llm.providers as string[]).includes(price.provider))
    return `model ${model} runs on ${price.provider}, which this server does not talk to (LLM_PROVIDERS: ${llm.providers.join(', ')})`;
  return undefined;
}
