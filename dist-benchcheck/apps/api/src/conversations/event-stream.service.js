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
Object.defineProperty(exports, "__esModule", { value: true });
exports.EventStreamService = exports.SSE_MAX_BUFFERED_BYTES = void 0;
const common_1 = require("@nestjs/common");
const config_1 = require("@parley/config");
const conversation_1 = require("@parley/conversation");
const event_store_1 = require("@parley/event-store");
const platform_1 = require("@parley/platform");
const event_envelope_1 = require("./event-envelope");
/** Past this much unsent output a client is too slow: it is dropped and reconnects with Last-Event-ID. */
exports.SSE_MAX_BUFFERED_BYTES = 1 << 20;
const REPLAY_BATCH = 200;
/**
 * One SSE connection: stored events after `after`, then live ones. Both phases read the stream
 * by version from Postgres (versions of one stream commit in order), so the switch from replay
 * to live has no gap and no duplicate; notifications only say when to look again.
 */
let EventStreamService = class EventStreamService {
    constructor(store, watcher, deltas, config) {
        this.store = store;
        this.watcher = watcher;
        this.deltas = deltas;
        this.config = config;
    }
    async serve(conversationId, after, req, res) {
        const streamId = (0, conversation_1.conversationStreamId)(conversationId);
        let closed = false;
        const wakeup = new event_store_1.Wakeup();
        const poke = wakeup.poke;
        const close = () => {
            if (closed)
                return;
            closed = true;
            poke();
        };
        req.on('close', close);
        res.on('close', close);
        res.on('drain', poke);
        res.writeHead(200, {
            'content-type': 'text/event-stream; charset=utf-8',
            'cache-control': 'no-cache, no-transform',
            connection: 'keep-alive',
            'x-accel-buffering': 'no',
        });
        res.write(`retry: ${this.config.sse.retryMs}\n\n`);
        const tooSlow = () => res.writableLength > exports.SSE_MAX_BUFFERED_BYTES;
        const drop = () => {
            res.destroy();
            close();
        };
        const stopWatching = this.watcher.watch(streamId, poke);
        const stopDeltas = await this.deltas.subscribe(conversationId, (d) => {
            if (closed)
                return;
            if (tooSlow())
                return drop();
            res.write(`event: AssistantTextDelta\ndata: ${JSON.stringify(d)}\n\n`);
        });
        const ping = setInterval(() => {
            if (!closed)
                res.write(': ping\n\n');
        }, this.config.sse.pingMs);
        try {
            let last = after;
            while (!closed) {
                wakeup.reset();
                const events = await this.store.readStream(streamId, { after: last, limit: REPLAY_BATCH });
                for (const e of events) {
                    if (closed)
                        break;
                    res.write(`id: ${e.version}\nevent: ${e.type}\ndata: ${JSON.stringify((0, event_envelope_1.toEnvelope)(e))}\n\n`);
                    last = e.version;
                    if (e.type === 'ConversationDeleted')
                        return;
                }
                if (tooSlow()) {
                    // wait for the socket to drain; a client that never reads is dropped
                    const drained = await wakeup.wait(30_000);
                    if (!drained && tooSlow())
                        return drop();
                    continue;
                }
                if (events.length < REPLAY_BATCH)
                    await wakeup.wait(this.config.eventPollMs);
            }
        }
        finally {
            clearInterval(ping);
            stopWatching();
            stopDeltas();
            if (!res.destroyed)
                res.end();
        }
    }
};
exports.EventStreamService = EventStreamService;
exports.EventStreamService = EventStreamService = __decorate([
    (0, common_1.Injectable)(),
    __param(3, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [event_store_1.EventStore,
        platform_1.StreamWatcher,
        platform_1.LiveDeltas, Object])
], EventStreamService);
//# sourceMappingURL=event-stream.service.js.map