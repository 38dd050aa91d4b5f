import { Module } from '@nestjs/common';
import { DevTokenController } from './dev-token.controller';
import { WebController } from './web.controller';

/** The web chat page (served at /) and the development token it can ask for. */
@Module({ controllers: [WebController, DevTokenController] })
export class WebModule {}
