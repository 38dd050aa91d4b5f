"use strict";
var __decorate = (this && this.__decorate) || function (decorators, target, key, desc) {
    var c = arguments.length, r = c < 3 ? target : desc === null ? desc = Object.getOwnPropertyDescriptor(target, key) : desc, d;
    if (typeof Reflect === "object" && typeof Reflect.decorate === "function") r = Reflect.decorate(decorators, target, key, desc);
    else for (var i = decorators.length - 1; i >= 0; i--) if (d = decorators[i]) r = (c < 3 ? d(r) : c > 3 ? d(target, key, r) : d(target, key)) || r;
    return c > 3 && r && Object.defineProperty(target, key, r), r;
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.ApiModule = void 0;
const common_1 = require("@nestjs/common");
const core_1 = require("@nestjs/core");
const config_1 = require("@parley/config");
const platform_1 = require("@parley/platform");
const books_http_module_1 = require("./books/books-http.module");
const conversations_module_1 = require("./conversations/conversations.module");
const auth_guard_1 = require("./auth/auth.guard");
const health_controller_1 = require("./health/health.controller");
const http_exception_filter_1 = require("./http/http-exception.filter");
/** The HTTP root: controllers call services; it enqueues, never consumes. */
let ApiModule = class ApiModule {
};
exports.ApiModule = ApiModule;
exports.ApiModule = ApiModule = __decorate([
    (0, common_1.Module)({
        imports: [
            config_1.ConfigModule,
            (0, platform_1.loggerModule)('api'),
            platform_1.DatabaseModule,
            platform_1.RedisModule,
            (0, platform_1.queueRootModule)(),
            conversations_module_1.ConversationsModule,
            books_http_module_1.BooksHttpModule,
        ],
        controllers: [health_controller_1.HealthController],
        providers: [
            { provide: core_1.APP_GUARD, useClass: auth_guard_1.AuthGuard },
            { provide: core_1.APP_FILTER, useClass: http_exception_filter_1.HttpExceptionFilter },
        ],
    })
], ApiModule);
//# sourceMappingURL=api.module.js.map