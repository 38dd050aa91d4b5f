import { Controller, Get, Inject, Req } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { AppConfig, CONFIG } from '@parley/config';
import { Public } from './auth.guard';
import { PROTECTED_RESOURCE_PATH, protectedResourceMetadata } from './protected-resource';

/** GET /.well-known/oauth-protected-resource: where a client learns how to get a token (RFC 9728). */
@ApiTags('auth')
@Public()
@Controller()
export class ProtectedResourceController {
  constructor(@Inject(CONFIG) private readonly config: AppConfig) {}

  @Get(PROTECTED_RESOURCE_PATH.slice(1))
  @ApiOperation({
    summary: 'OAuth 2.0 protected resource metadata (RFC 9728)',
    description:
      'The resource (this API) and, when the server knows it (AUTH_ISSUER, AUTH_JWKS_URL), the identity provider ' +
      'that issues its bearer tokens. Every 401 points here in its WWW-Authenticate header.',
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      required: ['resource', 'bearer_methods_supported'],
      properties: {
        resource: { type: 'string', format: 'uri' },
        authorization_servers: { type: 'array', items: { type: 'string', format: 'uri' } },
        bearer_methods_supported: { type: 'array', items: { type: 'string' } },
        resource_name: { type: 'string' },
      },
    },
  })
  metadata(@Req() req: FastifyRequest) {
    return protectedResourceMetadata(req, this.config.auth);
  }
}
