"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.HttpExceptionFilter = void 0;
const common_1 = require("@nestjs/common");
const node_http_1 = require("node:http");
const event_store_1 = require("@parley/event-store");
const conversation_1 = require("@parley/conversation");
const DOMAIN_STATUS = {
    not_found: 404,
    turn_not_found: 404,
    already_exists: 409,
    turn_in_progress: 409,
};
/**
 * Every error leaves as JSON {statusCode, error, message}. Client mistakes that surface below
 * Nest (malformed JSON, oversize bodies) keep their 4xx; only genuine faults are 500.
 */
let HttpExceptionFilter = class HttpExceptionFilter {
    constructor() {
        this.logger = new common_1.Logger('http');
    }
    catch(exception, host) {
        const res = host.switchToHttp().getResponse();
        const { status, message } = this.describe(exception);
        const retryAfter = exception instanceof common_1.HttpException ? exception.getResponse().retryAfter : undefined;
        if (retryAfter !== undefined && !res.headersSent)
            res.setHeader('Retry-After', String(retryAfter));
        if (status >= 500)
            this.logger.error(exception instanceof Error ? exception.stack : String(exception));
        if (res.headersSent) {
            res.end();
            return;
        }
        res.status(status).json({ statusCode: status, error: node_http_1.STATUS_CODES[status] ?? 'Error', message });
    }
    describe(e) {
        if (e instanceof common_1.HttpException) {
            const body = e.getResponse();
            const message = typeof body === 'object' && body && 'message' in body
                ? body.message
                : e.message;
            return { status: e.getStatus(), message };
        }
        if (e instanceof event_store_1.WrongExpectedVersionError) {
            return {
                status: common_1.HttpStatus.CONFLICT,
                message: `the conversation is at version ${e.actual}, not ${String(e.expected)}`,
            };
        }
        if (e instanceof conversation_1.DomainError)
            return { status: DOMAIN_STATUS[e.code], message: e.message };
        // errors raised by body-parser and multer carry the status they mean
        const status = e?.status ?? e?.statusCode;
        if (typeof status === 'number' && status >= 400 && status < 500) {
            const type = e.type;
            const message = type === 'entity.too.large'
                ? 'the request body is too large'
                : type === 'entity.parse.failed'
                    ? 'the request body is not valid JSON'
                    : String(e.message);
            return { status, message };
        }
        return { status: common_1.HttpStatus.INTERNAL_SERVER_ERROR, message: 'internal error' };
    }
};
exports.HttpExceptionFilter = HttpExceptionFilter;
exports.HttpExceptionFilter = HttpExceptionFilter = __decorate([
    (0, common_1.Catch)()
], HttpExceptionFilter);
//# sourceMappingURL=http-exception.filter.js.map