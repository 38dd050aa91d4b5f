import { Module } from '@nestjs/common';
import { ConversationsModule } from '../conversations/conversations.module';
import { McpModule } from '../mcp/mcp.module';
import { RateLimitsModule } from '../rate-limits/rate-limits.module';
import { AgUiController } from './ag-ui.controller';
import { AiSdkChatController } from './ai-sdk-chat.controller';
import { TurnFeed } from './turn-feed';

/**
 * Chat front ends' own protocols (the AI SDK's UI message stream, AG-UI) as views of the same
 * turns: posted through MessagePosting, followed as the MCP ask follows them (McpModule's TurnFollower).
 */
@Module({
  imports: [ConversationsModule, McpModule, RateLimitsModule],
  controllers: [AiSdkChatController, AgUiController],
  providers: [TurnFeed],
})
export class ChatProtocolsModule {}
