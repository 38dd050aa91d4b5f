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
Object.defineProperty(exports, "__esModule", { value: true });
exports.StreamWatcher = void 0;
const common_1 = require("@nestjs/common");
const event_store_1 = require("@parley/event-store");
/**
 * Wakes readers of one stream when anything is appended to it (any process), and all readers
 * after the LISTEN connection comes back, since notifications may have been missed meanwhile.
 */
let StreamWatcher = class StreamWatcher {
    constructor(notifier) {
        this.notifier = notifier;
        this.watchers = new Map();
        this.onAppend = (streamId) => {
            this.watchers.get(streamId)?.forEach((w) => w());
        };
        this.onReconnected = () => {
            this.watchers.forEach((set) => set.forEach((w) => w()));
        };
        notifier.on('append', this.onAppend);
        notifier.on('reconnected', this.onReconnected);
    }
    watch(streamId, wake) {
        let set = this.watchers.get(streamId);
        if (!set)
            this.watchers.set(streamId, (set = new Set()));
        set.add(wake);
        return () => {
            set.delete(wake);
            if (set.size === 0)
                this.watchers.delete(streamId);
        };
    }
    onModuleDestroy() {
        this.notifier.off('append', this.onAppend);
        this.notifier.off('reconnected', this.onReconnected);
    }
};
exports.StreamWatcher = StreamWatcher;
exports.StreamWatcher = StreamWatcher = __decorate([
    (0, common_1.Injectable)(),
    __metadata("design:paramtypes", [event_store_1.AppendNotifier])
], StreamWatcher);
//# sourceMappingURL=stream-watcher.js.map