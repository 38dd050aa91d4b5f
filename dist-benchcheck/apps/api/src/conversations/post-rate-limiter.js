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
exports.PostRateLimiter = void 0;
const common_1 = require("@nestjs/common");
const rate_limiter_flexible_1 = require("rate-limiter-flexible");
const config_1 = require("@parley/config");
const platform_1 = require("@parley/platform");
/** RATE_LIMIT_POSTS_PER_MIN per user, shared by every API replica through Redis. */
let PostRateLimiter = class PostRateLimiter {
    constructor(redis, config) {
        this.limiter = new rate_limiter_flexible_1.RateLimiterRedis({
            storeClient: redis.main,
            keyPrefix: `${config.queuePrefix}:rl:posts`,
            points: config.limits.postsPerMinute,
            duration: 60,
            useRedisPackage: false,
        });
    }
    async consume(userId) {
        try {
            await this.limiter.consume(userId);
        }
        catch (e) {
            if (!(e instanceof rate_limiter_flexible_1.RateLimiterRes))
                throw e;
            const retryAfter = Math.max(1, Math.ceil(e.msBeforeNext / 1000));
            throw new common_1.HttpException({ message: `too many messages: at most ${this.limiter.points} a minute`, retryAfter }, common_1.HttpStatus.TOO_MANY_REQUESTS);
        }
    }
};
exports.PostRateLimiter = PostRateLimiter;
exports.PostRateLimiter = PostRateLimiter = __decorate([
    (0, common_1.Injectable)(),
    __param(1, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [platform_1.RedisConnections, Object])
], PostRateLimiter);
//# sourceMappingURL=post-rate-limiter.js.map