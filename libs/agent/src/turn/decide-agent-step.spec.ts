import { evolve, initialState } from '@parley/conversation';
import { e, invoked, posted, replied, result } from '../../../../test/support/factories/turn-events';
import { ChatResult, StoppedAttempt } from '../llm/llm.types';
import { priceTableWith } from '../llm/pricing';
import { AgentCommand, FoldedForAgentCommands, decideAgentStep } from './decide-agent-step';
import { evolveTurns, TurnEvent } from './turn-fold';

/** Given: the conversation these events make, folded as a worker folds it. */
function given(...events: TurnEvent[]): FoldedForAgentCommands {
  const started = e('ConversationStarted', {
    ownerId: 'reader',
    bookId: 'b1',
    bookIds: ['b1'],
    title: null,
    readingPosition: null,
  });
  return [started, ...events].reduce(
    (f: FoldedForAgentCommands, ev) => ({
      version: f.version + 1,
      state: evolve(f.state, ev),
      turns: evolveTurns(f.turns, ev),
      lastEventId: `e${f.version + 1}`,
    }),
    { version: 0, state: initialState(), turns: [] },
  );
}

const step = { stepId: 'step-1', at: '2026-11-22T10:00:03Z' };
const usage = { inputTokens: 1000, outputTokens: 100, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
const reply = (content: ChatResult['content']): ChatResult => ({
  content,
  stopReason: content.some((b) => b.type === 'tool_use') ? 'tool_use' : 'end_turn',
  usage,
  model: 'claude-sonnet-5-5',
});
const answer = reply([{ type: 'text', text: 'She left.' }]);
const asksToSearch = reply([{ type: 'tool_use', id: 'toolu_2', name: 'search_book', input: { query: 'q' } }]);
const replyOf = (iteration: number, result: ChatResult = answer): AgentCommand => ({
  type: 'RecordModelReply',
  turnId: 't1',
  ...step,
  iteration,
  allowTools: true,
  result,
});
const outputsFor = (...toolUseIds: string[]) =>
  toolUseIds.map((toolUseId) => ({
    call: { toolUseId, name: 'search_book', input: {} },
    output: { content: 'a passage' },
    citationStart: 1,
  }));
const cut = { coversVersions: [2, 3] as [number, number], droppedVersions: [2, 3] as [number, number] };
const attempt: StoppedAttempt = { messageId: 'msg_1', model: 'claude-sonnet-5-5', usage, cause: 'aborted' };
const types = (events: Array<{ type: string }>) => events.map((ev) => ev.type);

/** The decider with the shipped prices. */
const prices = priceTableWith();
const decide = (command: AgentCommand, folded: FoldedForAgentCommands) => decideAgentStep(command, folded, prices);

describe('decideAgentStep', () => {
  describe('RecordModelReply', () => {
    it("given an open turn, when its next call answers, then AssistantReplied with the step's ids", () => {
      const events = decide(replyOf(1), given(posted('t1')));
      expect(types(events)).toEqual(['AssistantReplied']);
      // decided again (a lost race, a crash), the step makes the very same event
      expect(decide(replyOf(1), given(posted('t1')))).toEqual(events);
    });

    it('given an open turn, when its call asks for a tool, then ToolInvoked', () => {
      expect(types(decide(replyOf(1, asksToSearch), given(posted('t1'))))).toEqual(['ToolInvoked']);
    });

    it('given a turn whose tool calls have their results, when the next call answers, then it is recorded', () => {
      const f = given(posted('t1'), invoked('t1', 'toolu_1'), result('t1', 'toolu_1'));
      expect(types(decide(replyOf(2), f))).toEqual(['AssistantReplied']);
    });

    it('refuses (nothing) a reply for a call the log already holds: another worker recorded it', () => {
      const f = given(posted('t1'), invoked('t1', 'toolu_1'), result('t1', 'toolu_1'));
      expect(decide(replyOf(1, asksToSearch), f)).toEqual([]);
    });

    it('refuses (nothing) a reply while the last call still waits for tool results', () => {
      expect(decide(replyOf(2), given(posted('t1'), invoked('t1', 'toolu_1')))).toEqual([]);
    });

    it('refuses (nothing) a reply to a turn that was cancelled, failed or answered', () => {
      const cancelled = e('TurnCancelled', { turnId: 't1' });
      const failed = e('TurnFailed', { turnId: 't1', code: 'x', message: 'x', retryable: false });
      for (const ending of [cancelled, failed, replied('t1')])
        expect(decide(replyOf(1), given(posted('t1'), ending))).toEqual([]);
    });

    it('refuses (nothing) a reply in a conversation deleted, erased, or without the turn', () => {
      expect(decide(replyOf(1), given(posted('t1'), e('ConversationDeleted', {})))).toEqual([]);
      const erased = e('ConversationErased', { erasedEvents: 2, subject: { kind: 'conversation' } });
      expect(decide(replyOf(1), given(posted('t1'), erased))).toEqual([]);
      expect(decide(replyOf(1), given(posted('t2')))).toEqual([]);
    });
  });

  describe('RecordToolResults', () => {
    const command = (...ids: string[]): AgentCommand => ({
      type: 'RecordToolResults',
      turnId: 't1',
      ...step,
      outputs: outputsFor(...ids),
    });

    it("given a call's tool uses without results, when they ran, then ToolResultRecorded for each", () => {
      const f = given(posted('t1'), invoked('t1', 'a'), invoked('t1', 'b'));
      expect(types(decide(command('a', 'b'), f))).toEqual(['ToolResultRecorded', 'ToolResultRecorded']);
    });

    it('refuses (nothing) results the log already holds, or for calls it does not know', () => {
      expect(decide(command('a'), given(posted('t1'), invoked('t1', 'a'), result('t1', 'a')))).toEqual([]);
      expect(decide(command('z'), given(posted('t1'), invoked('t1', 'a')))).toEqual([]);
    });

    it('refuses (nothing) results for a cancelled turn', () => {
      const f = given(posted('t1'), invoked('t1', 'a'), e('TurnCancelled', { turnId: 't1' }));
      expect(decide(command('a'), f)).toEqual([]);
    });
  });

  describe('RecordSearches', () => {
    const command: AgentCommand = {
      type: 'RecordSearches',
      turnId: 't1',
      ...step,
      reformulated: reply([{ type: 'text', text: 'lamp keeper' }]),
      hyde: null,
    };

    it('given a turn with no call yet, when the question was rewritten, then its search as ToolInvoked', () => {
      expect(types(decide(command, given(posted('t1'))))).toEqual(['ToolInvoked']);
    });

    it('refuses (nothing) once the turn has searched', () => {
      expect(decide(command, given(posted('t1'), invoked('t1', 'retrieve_1')))).toEqual([]);
    });
  });

  describe('RecordSummary and RecordTrimmedHistory', () => {
    const summary: AgentCommand = {
      type: 'RecordSummary',
      turnId: 't2',
      ...step,
      cut,
      result: reply([{ type: 'text', text: 'They met.' }]),
    };
    const trim: AgentCommand = {
      type: 'RecordTrimmedHistory',
      turnId: 't2',
      ...step,
      cut,
      failure: { code: 'llm_overloaded', message: 'busy', stoppedAttempts: [attempt] },
    };

    it('given a turn before its first call, when its history was summarised, then HistorySummarized', () => {
      expect(types(decide(summary, given(posted('t1'), replied('t1'), posted('t2'))))).toEqual(['HistorySummarized']);
    });

    it("given a turn that replied, when it cut the next turn's history ahead, then it is recorded", () => {
      const ahead = { ...summary, turnId: 't1' };
      expect(types(decide(ahead, given(posted('t1'), replied('t1'))))).toEqual(['HistorySummarized']);
    });

    it('given a failed summary call, then what it was billed and HistoryTrimmed', () => {
      expect(types(decide(trim, given(posted('t1'), replied('t1'), posted('t2'))))).toEqual([
        'ModelCallStopped',
        'HistoryTrimmed',
      ]);
    });

    it('refuses (nothing) a second cut by the same turn, or a cut after its first call', () => {
      const summarised = e('HistorySummarized', { turnId: 't2', coversVersions: [2, 3], summary: 's' });
      expect(decide(summary, given(posted('t1'), replied('t1'), posted('t2'), summarised))).toEqual([]);
      expect(decide(trim, given(posted('t1'), replied('t1'), posted('t2'), invoked('t2', 'a')))).toEqual([]);
    });
  });

  describe('RecordModelBatchSubmission', () => {
    const command: AgentCommand = {
      type: 'RecordModelBatchSubmission',
      turnId: 't1',
      ...step,
      submitted: { step: 't1/reply/1', provider: 'anthropic', providerBatchId: 'msgbatch_1' },
    };

    it('given an open turn, when its call went into a provider batch, then ModelBatchSubmitted', () => {
      expect(types(decide(command, given(posted('t1'))))).toEqual(['ModelBatchSubmitted']);
    });

    it('refuses (nothing) a second submission of the same call', () => {
      const submitted = e('ModelBatchSubmitted', { turnId: 't1', ...command.submitted });
      expect(decide(command, given(posted('t1'), submitted))).toEqual([]);
    });
  });

  describe('RecordStoppedCall', () => {
    const command: AgentCommand = { type: 'RecordStoppedCall', turnId: 't1', iteration: 1, attempts: [attempt] };

    it('given a turn the reader cancelled, when its call stopped, then ModelCallStopped says cancelled', () => {
      const [stopped] = decide(command, given(posted('t1'), e('TurnCancelled', { turnId: 't1' })));
      expect(stopped).toMatchObject({ type: 'ModelCallStopped', data: { reason: 'cancelled', iteration: 1 } });
    });

    it('given an open turn, when its call was aborted, then ModelCallStopped says aborted', () => {
      const [stopped] = decide(command, given(posted('t1')));
      expect(stopped.data).toMatchObject({ reason: 'aborted' });
    });

    it('refuses (nothing) in an erased conversation or for a turn it never had', () => {
      const erased = e('ConversationErased', { erasedEvents: 2, subject: { kind: 'conversation' } });
      expect(decide(command, given(posted('t1'), erased))).toEqual([]);
      expect(decide(command, given(posted('t2')))).toEqual([]);
    });
  });

  describe('RecordKeptEvents (a step kept by a release before 0.3)', () => {
    const kept = {
      id: 'kept-1',
      type: 'AssistantReplied' as const,
      data: { turnId: 't1', messageId: 'm', content: 'x' },
      metadata: { userId: 'reader', correlationId: 't1' },
    } as unknown as Extract<AgentCommand, { type: 'RecordKeptEvents' }>['events'][number];
    const command: AgentCommand = { type: 'RecordKeptEvents', turnId: 't1', events: [kept] };

    it('given the open turn, then its events as they were made (ids kept), stamped anew', () => {
      expect(decide(command, given(posted('t1')))).toEqual([
        { id: 'kept-1', type: 'AssistantReplied', data: kept.data },
      ]);
    });

    it('refuses (nothing) once the turn ended, or events of another turn', () => {
      expect(decide(command, given(posted('t1'), replied('t1')))).toEqual([]);
      const other: AgentCommand = { ...command, turnId: 't2' };
      expect(decide(other, given(posted('t2')))).toEqual([]);
    });
  });
});
