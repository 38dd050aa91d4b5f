import { modelRefusal, priceTable } from '@parley/agent';
import { AppConfig } from '@parley/config';
import { PolicyPatch } from '@parley/conversation';
import { invalid } from '../http/problem.exception';

/** A question's text: not blank, and within MESSAGE_MAX_CHARS. */
export function assertMessageText(config: Pick<AppConfig, 'limits'>, text: string, field: string, what: string): void {
  if (text.trim().length === 0) throw invalid(field, `${what} must not be blank`);
  if (text.length > config.limits.messageMaxChars)
    throw invalid(field, `${what} must be at most ${config.limits.messageMaxChars} characters`);
}

/** The limits of a policy that depend on the server: its models and its cap on model calls. */
export function assertPolicyAllowed(config: Pick<AppConfig, 'llm' | 'agent'>, policy: PolicyPatch): void {
  const { model, maxIterations } = policy;
  const refusal = typeof model === 'string' ? modelRefusal(model, config.llm, priceTable()) : undefined;
  if (refusal && model !== config.llm.model) throw invalid('policy.model', refusal);
  if (typeof maxIterations === 'number' && maxIterations > config.agent.maxIterations) {
    throw invalid(
      'policy.maxIterations',
      `maxIterations must be at most ${config.agent.maxIterations} (AGENT_MAX_ITERATIONS)`,
    );
  }
}

/** The provider a conversation's model runs on (the scripted stand-in's, when it answers every call). */
export function providerOf(config: Pick<AppConfig, 'llm'>, model: string | undefined): string {
  const { llm } = config;
  if (llm.provider === 'scripted') return 'scripted';
  return priceTable().providerOf(model ?? llm.model) ?? llm.provider;
}
