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
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.AuthGuard = exports.AllowQueryToken = exports.Public = void 0;
exports.verifyToken = verifyToken;
exports.mintToken = mintToken;
const common_1 = require("@nestjs/common");
const core_1 = require("@nestjs/core");
const jsonwebtoken_1 = __importDefault(require("jsonwebtoken"));
const config_1 = require("@parley/config");
const PUBLIC = 'parley:public';
const QUERY_TOKEN = 'parley:query-token';
/** No bearer token needed (health, docs). */
const Public = () => (0, common_1.SetMetadata)(PUBLIC, true);
exports.Public = Public;
/** Also accepts ?access_token= (EventSource cannot set headers). */
const AllowQueryToken = () => (0, common_1.SetMetadata)(QUERY_TOKEN, true);
exports.AllowQueryToken = AllowQueryToken;
/** Bearer JWTs, HS256 with AUTH_JWT_SECRET; `sub` is the user id; `exp` enforced. */
let AuthGuard = class AuthGuard {
    constructor(reflector, config) {
        this.reflector = reflector;
        this.config = config;
    }
    canActivate(context) {
        const targets = [context.getHandler(), context.getClass()];
        if (this.reflector.getAllAndOverride(PUBLIC, targets))
            return true;
        const req = context.switchToHttp().getRequest();
        const token = bearer(req) ?? (this.reflector.getAllAndOverride(QUERY_TOKEN, targets) ? queryToken(req) : undefined);
        if (!token)
            throw new common_1.UnauthorizedException('a bearer token is required');
        req.user = { id: verifyToken(token, this.config.auth.jwtSecret) };
        return true;
    }
};
exports.AuthGuard = AuthGuard;
exports.AuthGuard = AuthGuard = __decorate([
    (0, common_1.Injectable)(),
    __param(1, (0, common_1.Inject)(config_1.CONFIG)),
    __metadata("design:paramtypes", [core_1.Reflector, Object])
], AuthGuard);
function verifyToken(token, secret) {
    try {
        const claims = jsonwebtoken_1.default.verify(token, secret, { algorithms: ['HS256'] });
        const sub = typeof claims === 'object' ? claims.sub : undefined;
        if (typeof sub !== 'string' || sub.length === 0 || sub.length > 200)
            throw new Error('no sub');
        if (typeof claims === 'object' && claims.exp === undefined)
            throw new Error('no exp');
        return sub;
    }
    catch (e) {
        const expired = e instanceof jsonwebtoken_1.default.TokenExpiredError;
        throw new common_1.UnauthorizedException(expired ? 'the token has expired' : 'the token is not valid');
    }
}
function mintToken(userId, secret, ttlSeconds = 24 * 3600) {
    return jsonwebtoken_1.default.sign({ sub: userId }, secret, { algorithm: 'HS256', expiresIn: ttlSeconds });
}
function bearer(req) {
    const h = req.headers.authorization;
    const m = typeof h === 'string' ? /^Bearer\s+(\S+)$/i.exec(h) : null;
    return m?.[1];
}
function queryToken(req) {
    const t = req.query.access_token;
    return typeof t === 'string' && t.length > 0 ? t : undefined;
}
//# sourceMappingURL=auth.guard.js.map