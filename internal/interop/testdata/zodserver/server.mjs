// An MCP server written with the TypeScript SDK (@modelcontextprotocol/sdk)
// and zod 4 input schemas, for agt's interoperability tests
// (internal/interop). Both are pinned in the package.json at the root of
// the repository; run it with the Node 22 that npm ci installs there:
//
//   node server.mjs                          MCP on stdio
//   node server.mjs --http                   streamable HTTP on 127.0.0.1 (a
//                                            free port) at /mcp; the first
//                                            stdout line is "listening on
//                                            URL"; ends when stdin closes
//   --call-log FILE                          append the tool name of every
//                                            tools/call request the server
//                                            receives to FILE
//
// Ten tools, four of them with patterns that use ECMA-262 lookaround (zod
// writes them for z.hostname(), z.emoji(), z.iso.duration(), and a
// .regex() with a lookahead), which Go's regexp cannot compile (issue 24
// item 1).
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import * as z from 'zod';

const args = process.argv.slice(2);
const http = args.includes('--http');
const logAt = args.indexOf('--call-log');
const callLog = logAt >= 0 ? args[logAt + 1] : undefined;
if (logAt >= 0 && !callLog) {
  console.error('zodserver: --call-log wants a file');
  process.exit(2);
}

const text = (t) => ({ content: [{ type: 'text', text: t }] });

function newServer() {
  const server = new McpServer({ name: 'agt-interop-zod', version: '1.0.0' });
  server.registerTool('resolve_host', {
    description: 'Resolves a host name (z.hostname()).',
    inputSchema: { host: z.hostname() },
  }, async ({ host }) => text(`resolved ${host}`));
  server.registerTool('react', {
    description: 'Reacts with an emoji (z.emoji()).',
    inputSchema: { emoji: z.emoji() },
  }, async ({ emoji }) => text(`reacted ${emoji}`));
  server.registerTool('schedule', {
    description: 'Schedules a job every ISO 8601 duration (z.iso.duration()).',
    inputSchema: { every: z.iso.duration(), job: z.string().min(1).max(64) },
  }, async ({ every, job }) => text(`scheduled ${job} every ${every}`));
  server.registerTool('set_passphrase', {
    description: 'Sets a passphrase of letters and digits (a .regex() with lookaheads).',
    inputSchema: { passphrase: z.string().regex(/^(?=.*\d)(?=.*[A-Za-z]).{8,64}$/) },
  }, async () => text('passphrase set'));
  server.registerTool('send_mail', {
    description: 'Sends a mail (z.email()).',
    inputSchema: { to: z.email(), subject: z.string().max(100) },
  }, async ({ to }) => text(`sent to ${to}`));
  server.registerTool('get_user', {
    description: 'Reads a user by UUID (z.uuid()).',
    inputSchema: { id: z.uuid() },
  }, async ({ id }) => text(`user ${id}`));
  server.registerTool('add', {
    description: 'Adds two numbers.',
    inputSchema: { a: z.number(), b: z.number() },
  }, async ({ a, b }) => text(String(a + b)));
  server.registerTool('echo', {
    description: 'Returns its text.',
    inputSchema: { text: z.string().min(1).max(200) },
  }, async (args) => text(args.text));
  server.registerTool('paint', {
    description: 'Paints in a color, at a time (z.enum(), z.iso.datetime()).',
    inputSchema: { color: z.enum(['red', 'green', 'blue']), at: z.iso.datetime().optional() },
  }, async ({ color }) => text(`painted ${color}`));
  server.registerTool('server_info', {
    description: 'Names the server.',
  }, async () => text('agt-interop-zod 1.0.0'));
  return server;
}

// logCalls records every tools/call request as the transport receives it,
// before the SDK validates its arguments.
function logCalls(transport) {
  if (!callLog) return;
  const next = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (message && message.method === 'tools/call') {
      appendFileSync(callLog, `${message.params?.name}\n`);
    }
    next?.(message, extra);
  };
}

if (!http) {
  const transport = new StdioServerTransport();
  await newServer().connect(transport);
  logCalls(transport);
} else {
  const sessions = new Map();
  const httpServer = createServer(async (req, res) => {
    if (new URL(req.url, 'http://127.0.0.1').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    try {
      const id = req.headers['mcp-session-id'];
      let transport = id ? sessions.get(id) : undefined;
      if (id && !transport) {
        res.writeHead(404, { 'Content-Type': 'application/json' })
          .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }));
        return;
      }
      if (!transport) {
        // No session yet: the transport accepts only an initialize.
        transport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sid) => sessions.set(sid, transport),
        });
        transport.onclose = () => {
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await newServer().connect(transport);
        logCalls(transport);
      }
      await transport.handleRequest(req, res);
    } catch (err) {
      console.error('zodserver:', err);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  httpServer.listen(0, '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
  // The test ends the server by closing its stdin.
  process.stdin.resume();
  process.stdin.on('end', async () => {
    for (const t of sessions.values()) await t.close().catch(() => {});
    httpServer.closeAllConnections();
    httpServer.close(() => process.exit(0));
  });
}
