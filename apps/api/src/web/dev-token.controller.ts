import { isIP } from 'node:net';
import { Body, Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ApiCreatedResponse, ApiOperation, ApiProperty, ApiTags } from '@nestjs/swagger';
import { IsString, Matches, MaxLength, MinLength } from 'class-validator';
import { AppConfig, CONFIG, DEV_JWT_SECRET } from '@parley/config';
import { mintToken, Public } from '../auth/auth.guard';
import { problem } from '../http/problem.exception';
import { ApiProblems, BODY_PROBLEMS } from '../openapi/api-problems';

export class DevTokenRequestDto {
  @ApiProperty({ minLength: 1, maxLength: 100, example: 'alice', description: 'the user id (`sub`) of the token' })
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  @Matches(/^[A-Za-z0-9._@-]+$/, { message: 'userId may hold letters, digits and . _ @ -' })
  userId!: string;
}

export class DevTokenDto {
  @ApiProperty({ description: 'an HS256 bearer token for userId' })
  token!: string;

  @ApiProperty()
  userId!: string;

  @ApiProperty({ description: 'seconds the token is valid' })
  expiresIn!: number;
}

const TTL_SECONDS = 24 * 3600;

/**
 * The web page's "development token" button. It signs only with the public development secret
 * (DEV_JWT_SECRET), so it exists only where that secret is the one in use: NODE_ENV=development
 * with neither AUTH_JWT_SECRET nor AUTH_JWKS_URL set. Anywhere else (a real secret, an identity
 * provider, any other NODE_ENV) it answers 404: it must never sign with a secret that opens a real API.
 * It answers only a caller on this machine (the connection's own address, whatever X-Forwarded-For
 * says), so a development API bound to a network address (HOST) mints nothing for its neighbours.
 */
@ApiTags('development')
@Public()
@Controller('dev')
export class DevTokenController {
  constructor(@Inject(CONFIG) private readonly config: AppConfig) {}

  @Post('token')
  @HttpCode(201)
  @ApiOperation({
    summary: 'Mint a bearer token for any user id (NODE_ENV=development only)',
    description:
      'For trying Parley on a laptop: signs a 24-hour HS256 token with the public development secret. ' +
      'Answers 404 unless the API runs with NODE_ENV=development and neither AUTH_JWT_SECRET nor AUTH_JWKS_URL.',
  })
  @ApiCreatedResponse({ type: DevTokenDto })
  @ApiProblems(BODY_PROBLEMS, 'not_found', 'internal_error')
  async mint(@Body() body: DevTokenRequestDto, @Req() req: FastifyRequest): Promise<DevTokenDto> {
    const { jwtSecret, jwks } = this.config.auth;
    const onThisMachine = isLoopback(req.raw.socket.remoteAddress);
    if (this.config.env !== 'development' || jwtSecret !== DEV_JWT_SECRET || jwks || !onThisMachine) {
      throw problem('not_found', 'Cannot POST /v1/dev/token');
    }
    return {
      token: await mintToken(body.userId, DEV_JWT_SECRET, TTL_SECONDS),
      userId: body.userId,
      expiresIn: TTL_SECONDS,
    };
  }
}

/** 127.0.0.0/8, ::1, and 127.x written as an IPv4-mapped IPv6 address (a dual-stack socket's). */
export function isLoopback(address: string | undefined): boolean {
  if (!address || !isIP(address)) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice('::ffff:'.length) : address;
  return address === '::1' || (isIP(v4) === 4 && v4.startsWith('127.'));
}
