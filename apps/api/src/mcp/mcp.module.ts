import { Module } from '@nestjs/common';
import { BooksModule } from '@parley/books';
import { ConversationsModule } from '../conversations/conversations.module';
import { RateLimitsModule } from '../rate-limits/rate-limits.module';
import { AskCancellations } from './ask-cancellations';
import { McpAsk } from './mcp-ask';
import { McpRequests } from './mcp-endpoint';
import { ParleyMcpServer } from './parley-mcp-server';
import { TurnFollower } from './turn-follower';

/**
 * The MCP server's parts over the API's own use cases (ConversationsModule, BooksModule); the
 * route itself is mounted by mountMcp (mcp-endpoint.ts), outside Nest's controllers, as /mcp
 * speaks JSON-RPC rather than the API's REST and problems.
 */
@Module({
  imports: [ConversationsModule, BooksModule, RateLimitsModule],
  providers: [ParleyMcpServer, McpAsk, TurnFollower, AskCancellations, McpRequests],
  // TurnFollower: the chat protocols (apps/api/src/chat-protocols) follow their turns the same way
  exports: [ParleyMcpServer, McpRequests, TurnFollower],
})
export class McpModule {}
