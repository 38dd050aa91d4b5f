"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
var __metadata = (this && this.__metadata) || function (k, v) {
    if (typeof Reflect === "object" && typeof Reflect.metadata === "function") return Reflect.metadata(k, v);
};
var __param = (this && this.__param) || function (paramIndex, decorator) {
    return function (target, key) { decorator(target, key, paramIndex); }
};
var AgentTurnRunner_1;
Object.defineProperty(exports, "__esModule", { value: true });
exports.AgentTurnRunner = void 0;
const common_1 = require("@nestjs/common");
const node_crypto_1 = require("node:crypto");
const pg_1 = require("pg");
const agent_1 = require("@parley/agent");
const config_1 = require("@parley/config");
const conversation_1 = require("@parley/conversation");
const event_store_1 = require("@parley/event-store");
const platform_1 = require("@parley/platform");
/**
 * Runs one agent turn as a fold of its conversation's stream: load, fold, do the next step,
 * append it at the folded version, repeat. Whatever crashed before, the log says where to go on;
 * a worker that loses an append race re-reads and finds the turn moved on (or ended).
 */
let AgentTurnRunner = AgentTurnRunner_1 = class AgentTurnRunner {
    constructor(store, pool, llm, tools, deltas, config) {
        this.store = store;
        this.pool = pool;
        this.llm = llm;
        this.tools = tools;
        this.deltas = deltas;
        this.config = config;
        this.logger = new common_1.Logger(AgentTurnRunner_1.name);
    }
    async run(conversationId, turnId, signal) {
        for (;;) {
            const s = await this.load(conversationId, turnId, signal);
            const step = s.deleted
                ? { kind: 'ended' }
                : (0, agent_1.nextStep)(s.turns, turnId, this.config.agent.maxIterations);
            if (step.kind === 'ended' || step.kind === 'wait')
                return step;
            if (signal.aborted)
                return { kind: 'ended' }; // cancelled: the API recorded TurnCancelled
            try {
                const events = step.kind === 'run-tools'
                    ? await this.runTools(s, step.calls)
                    : await this.callLlm(s, step.iteration, step.allowTools, conversationId, signal);
                await this.append(conversationId, s.version, events);
            }
            catch (e) {
                if (e instanceof event_store_1.WrongExpectedVersionError)
                    continue; // someone else moved the stream: re-read
                if ((0, agent_1.isAbort)(e) || signal.aborted)
                    continue; // the next load sees TurnCancelled
                if (e instanceof agent_1.LlmError) {
                    await this.fail(conversationId, turnId, e.code, e.message, e.retryable);
                    continue;
                }
                throw e;
            }
        }
    }
    /** Records TurnFailed unless the turn already ended. */
    async fail(conversationId, turnId, code, message, retryable) {
        for (let attempt = 0; attempt < 5; attempt++) {
            const events = await this.store.readStream((0, conversation_1.conversationStreamId)(conversationId));
            const turn = (0, agent_1.turnsOf)(events).find((t) => t.turnId === turnId);
            if (!turn || turn.ending)
                return;
            try {
                await this.append(conversationId, events.length ? events[events.length - 1].version : 0, [
                    this.event(events, turnId, 'TurnFailed', { turnId, code, message: message.slice(0, 1000), retryable }),
                ]);
                this.logger.warn(`turn ${turnId} failed: ${code} ${message}`);
                return;
            }
            catch (e) {
                if (!(e instanceof event_store_1.WrongExpectedVersionError))
                    throw e;
            }
        }
    }
    async load(conversationId, turnId, signal) {
        const events = await this.store.readStream((0, conversation_1.conversationStreamId)(conversationId));
        const state = (0, conversation_1.fold)(events);
        const turns = (0, agent_1.turnsOf)(events);
        return {
            events,
            version: state.version,
            turns,
            turn: turns.find((t) => t.turnId === turnId),
            deleted: state.status !== 'active',
            ctx: {
                userId: state.ownerId ?? '',
                conversationId,
                bookId: state.bookId,
                readingPosition: state.readingPosition,
                signal,
            },
        };
    }
    /** Every pending call of the iteration, in parallel; results recorded together, in call order. */
    async runTools(s, calls) {
        const turn = s.turn;
        const outputs = await Promise.all(calls.map(async (c) => {
            const citationStart = (0, agent_1.citationStartFor)(turn, c.toolUseId);
            const out = await this.tools.run(c.name, c.input, { ...s.ctx, citationStart });
            return { c, out, citationStart };
        }));
        return outputs.map(({ c, out, citationStart }) => this.event(s.events, turn.turnId, 'ToolResultRecorded', {
            turnId: turn.turnId,
            toolUseId: c.toolUseId,
            content: out.content,
            isError: out.isError ?? false,
            ...(out.chunks ? { chunks: out.chunks, citationStart } : {}),
        }));
    }
    async callLlm(s, iteration, allowTools, conversationId, signal) {
        const turn = s.turn;
        const { messages, prefixEnd } = (0, agent_1.buildHistory)(s.turns, turn.turnId, this.config.agent.contextTokens);
        const tools = this.tools.specsFor(s.ctx);
        let index = 0;
        const result = await this.llm.chatWithTools(messages, tools, {
            system: await this.systemPrompt(s),
            prefixEnd,
            toolChoice: allowTools ? 'auto' : 'none',
            signal,
            onTextDelta: (text) => {
                this.deltas.publish(conversationId, { turnId: turn.turnId, index: index++, text }).catch(() => undefined);
            },
        });
        const text = result.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('');
        const toolUses = allowTools ? result.content.filter((b) => b.type === 'tool_use') : [];
        if (toolUses.length > 0) {
            return toolUses.map((b, i) => this.event(s.events, turn.turnId, 'ToolInvoked', {
                turnId: turn.turnId,
                toolUseId: b.id,
                name: b.name,
                input: b.input,
                iteration,
                ...(i === 0 ? { assistantText: text, usage: result.usage, model: result.model } : {}),
            }));
        }
        const usage = turn.iterations.reduce((sum, it) => (it.usage ? (0, agent_1.addUsage)(sum, it.usage) : sum), (0, agent_1.zeroUsage)());
        const total = (0, agent_1.addUsage)(usage, result.usage);
        const citations = (0, agent_1.citedPassages)(text, turn);
        const content = text.trim() ? text : '(no answer)';
        return [
            this.event(s.events, turn.turnId, 'AssistantReplied', {
                turnId: turn.turnId,
                messageId: (0, node_crypto_1.randomUUID)(),
                content,
                model: result.model,
                stopReason: result.stopReason,
                usage: total,
                costUsd: (0, agent_1.costUsd)(result.model, total),
                citations,
                isFromBook: citations.length > 0,
                iterations: iteration,
                latencyMs: Date.now() - turn.postedAt.getTime(),
            }),
        ];
    }
    async systemPrompt(s) {
        let book = 'a book the reader has not chosen yet';
        if (s.ctx.bookId) {
            const { rows } = await this.pool.query('SELECT title, author FROM books WHERE id = $1', [s.ctx.bookId]);
            if (rows[0])
                book = `"${rows[0].title}"${rows[0].author ? ` by ${rows[0].author}` : ''}`;
        }
        const scope = s.ctx.readingPosition === null
            ? 'The reader may discuss the whole book.'
            : `The reader has read up to and including chapter ${s.ctx.readingPosition}. Search only finds passages up to there.`;
        return (0, agent_1.renderPrompt)('conversation_system_prompt', { book, reading_scope: scope });
    }
    /** Agent events name the owner, the turn (correlation) and the event they follow from (causation). */
    event(history, turnId, type, data) {
        const owner = history.find((e) => e.type === 'ConversationStarted')?.data;
        const causationId = history[history.length - 1]?.id;
        return { id: (0, node_crypto_1.randomUUID)(), type, data, metadata: { userId: owner?.ownerId, correlationId: turnId, causationId } };
    }
    async append(conversationId, expectedVersion, events) {
        if (events.length === 0)
            return;
        await this.store.append((0, conversation_1.conversationStreamId)(conversationId), events, { expectedVersion });
    }
};
exports.AgentTurnRunner = AgentTurnRunner;
exports.AgentTurnRunner = AgentTurnRunner = AgentTurnRunner_1 = __decorate([
    (0, common_1.Injectable)(),
    __param(1, (0, common_1.Inject)(pg_1.Pool)),
    __param(2, (0, common_1.Inject)(agent_1.LLM_CLIENT)),
    __param(5, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [event_store_1.EventStore,
        pg_1.Pool, Object, agent_1.ToolRegistry,
        platform_1.LiveDeltas, Object])
], AgentTurnRunner);
//# sourceMappingURL=agent-turn.runner.js.map