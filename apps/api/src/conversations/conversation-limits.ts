import { modelAllowedToReaders, modelRefusal, PriceTable } from '@parley/agent';
import { AppConfig } from '@parley/config';
import { PolicyPatch } from '@parley/conversation';
import { invalid, problem } from '../http/problem.exception';

/** A question's text: not blank, and within MESSAGE_MAX_CHARS. */
export function assertMessageText(config: Pick<AppConfig, 'limits'>, text: string, field: string, what: string): void {
  if (text.trim().length === 0) throw invalid(field, `${what} must not be blank`);
  if (text.length > config.limits.messageMaxChars)
    throw invalid(field, `${what} must be at most ${config.limits.messageMaxChars} characters`);
}

/**
 * The limits of a policy that depend on the server: the models the operator lets readers pick
 * (POLICY_MODELS, else 400 model_not_allowed), which must also be priced (in `table`) on a
 * provider it talks to, and its cap on model calls.
 */
export function assertPolicyAllowed(
  config: Pick<AppConfig, 'llm' | 'agent'>,
  table: PriceTable,
  policy: PolicyPatch,
): void {
  const { model, maxIterations } = policy;
  if (typeof model === 'string' && model !== config.llm.model) {
    const refusal = modelAllowedToReaders(model, config.llm)
      ? modelRefusal(model, config.llm, table)
      : `model ${model} is not one this server lets a conversation choose (POLICY_MODELS: ${allowedModels(config.llm)})`;
    if (refusal) throw problem('model_not_allowed', refusal, { errors: [{ field: 'policy.model', message: refusal }] });
  }
  if (typeof maxIterations === 'number' && maxIterations > config.agent.maxIterations) {
    throw invalid(
      'policy.maxIterations',
      `maxIterations must be at most ${config.agent.maxIterations} (AGENT_MAX_ITERATIONS)`,
    );
  }
}

const allowedModels = ({ model, policyModels }: AppConfig['llm']): string =>
  policyModels === '*' ? 'any priced model' : [...new Set([model, ...policyModels])].join(', ');

/** The provider a conversation's model runs on, by `table` (the scripted stand-in's, when it answers every call). */
export function providerOf(config: Pick<AppConfig, 'llm'>, table: PriceTable, model: string | undefined): string {
  const { llm } = config;
  if (llm.provider === 'scripted') return 'scripted';
  return table.providerOf(model ?? llm.model) ?? llm.provider;
}
