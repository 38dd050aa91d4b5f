import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { AppConfig, CONFIG } from '@parley/config';
import { AuthUser } from '../auth/auth-user';
import { bearer } from '../auth/auth.guard';
import { originOf } from '../auth/protected-resource';
import { TokenVerifier } from '../auth/token-verifier';
import { sendProblem } from '../http/http-exception.filter';
import { problem } from '../http/problem.exception';
import { ParleyMcpServer } from './parley-mcp-server';

/** Where the MCP server answers. */
export const MCP_PATH = '/mcp';

/**
 * The MCP requests being answered in this process, so a stopping API ends them (their asks'
 * turns go on in the workers) instead of waiting for their turns.
 */
@Injectable()
export class McpRequests implements BeforeApplicationShutdown {
  private readonly open = new Set<StreamableHTTPServerTransport>();

  track(transport: StreamableHTTPServerTransport): () => void {
    this.open.add(transport);
    return () => this.open.delete(transport);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await Promise.all([...this.open].map((t) => t.close().catch(() => undefined)));
  }
}

/**
 * Serves MCP's Streamable HTTP transport at /mcp (call before init), unless MCP_ENABLED=false:
 * then nothing answers there but the usual 404.
 *
 * Stateless: every POST gets its own McpServer and transport, built for the caller its bearer
 * token names (checked before the body is read, with the API's 401 problems), so any replica
 * answers any request and a deploy loses nothing but the requests in flight. The initialize
 * answer carries an Mcp-Session-Id that the server keeps no state for: it only tells one client's
 * JSON-RPC ids from another's, so that a `notifications/cancelled` finds the ask it names. There
 * is no server-to-client stream (GET answers 405) and nothing to delete (DELETE answers 405).
 */
export function mountMcp(app: NestFastifyApplication): void {
  const config = app.get<AppConfig>(CONFIG);
  if (!config.mcp.enabled) return;
  const log = new Logger('Mcp');
  const verifier = app.get(TokenVerifier);
  const servers = app.get(ParleyMcpServer);
  const requests = app.get(McpRequests);

  const mcp: FastifyPluginAsync = async (scope) => {
    scope.addHook('onRequest', async (req, reply) => {
      try {
        assertOriginAllowed(req, config.cors.origins);
        const token = bearer(req);
        if (!token) throw problem('token_missing', 'a bearer token is required');
        (req as FastifyRequest & { user: AuthUser }).user = await verifier.verify(token);
      } catch (e) {
        sendProblem(reply, e, log);
        return reply;
      }
    });
    scope.post('/', (req, reply) => answer(req as FastifyRequest & { user: AuthUser }, reply));
    scope.get('/', (_req, reply) => methodNotAllowed(reply));
    scope.delete('/', (_req, reply) => methodNotAllowed(reply));
  };

  async function answer(req: FastifyRequest & { user: AuthUser }, reply: FastifyReply): Promise<void> {
    const header = req.headers['mcp-session-id'];
    const sessionId = isInitializeRequest(req.body) ? randomUUID() : typeof header === 'string' ? header : '';
    if (isInitializeRequest(req.body)) reply.raw.setHeader('mcp-session-id', sessionId);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    const server = servers.build({ user: req.user, sessionId, abandon: () => void transport.close() });
    const untrack = requests.track(transport);
    reply.hijack(); // the transport writes the raw response (JSON, or an SSE stream for a long call)
    reply.raw.on('close', () => {
      untrack();
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req.raw, reply.raw, req.body);
    } catch (e) {
      log.error(e instanceof Error ? e.stack : String(e));
      if (!reply.raw.headersSent) {
        reply.raw.writeHead(500, { 'content-type': 'application/json' });
        reply.raw.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal error' }, id: null }));
      }
    }
  }

  void app.register(mcp, { prefix: MCP_PATH });
}

/**
 * A browser's request names the page it comes from (Origin): only this API's own origin and those
 * CORS_ORIGINS allows may call /mcp, so a page on a name rebound to a local server (DNS
 * rebinding) cannot drive a reader's MCP session, as the MCP specification asks. Clients that are
 * not browsers send no Origin and are not concerned.
 */
export function assertOriginAllowed(req: FastifyRequest, allowed: string[]): void {
  const origin = req.headers.origin;
  if (origin === undefined) return;
  if (origin === originOf(req) || allowed.includes('*') || allowed.includes(origin)) return;
  throw problem('origin_not_allowed', `the origin ${origin} may not call ${MCP_PATH} (CORS_ORIGINS)`);
}

/** GET (a server-to-client stream) and DELETE (ending a session): this stateless server has neither. */
function methodNotAllowed(reply: FastifyReply): void {
  void reply
    .code(405)
    .header('allow', 'POST')
    .send({
      jsonrpc: '2.0',
      error: { code: -32000, message: 'Method not allowed: /mcp is stateless, POST only' },
      id: null,
    });
}
