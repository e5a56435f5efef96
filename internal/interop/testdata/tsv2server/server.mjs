// An MCP server written with the TypeScript SDK v2
// (@modelcontextprotocol/server, which implements protocol 2026-07-28)
// and zod 4 input schemas, for agt's interoperability tests
// (internal/interop) and benchmarks (internal/bench). The SDK and zod are
// pinned in the package.json at the root of the repository; run it with
// the Node 22 that npm ci installs there:
//
//   node server.mjs                   MCP on stdio (the SDK's serveStdio)
//   node server.mjs --http            streamable HTTP on 127.0.0.1 (a free
//                                     port) at /mcp (the SDK's
//                                     createMcpHandler: per request, no
//                                     sessions); the first stdout line is
//                                     "listening on URL"; ends when stdin
//                                     closes
//   --era modern|dual                 modern: 2026-07-28 only (a legacy
//                                     request is refused with the
//                                     unsupported-protocol-version error);
//                                     dual (the default): the legacy era
//                                     too, as the SDK serves it by default
//   --call-log FILE                   append "TOOL VERSION" for every
//                                     tools/call the server runs to FILE:
//                                     the tool's name and the protocol
//                                     version in the request's _meta
//                                     ("legacy" when it has none)
//
// Its tools are those of the Go interop servers (internal/interop/mcpgo,
// internal/interop/gosdkserver): echo, add, set_level, open_ticket and
// server_info.
import { appendFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { McpServer, createMcpHandler, PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import * as z from 'zod';

const args = process.argv.slice(2);
const flag = (name) => {
  const at = args.indexOf(name);
  if (at < 0) return undefined;
  if (!args[at + 1]) {
    console.error(`tsv2server: ${name} wants a value`);
    process.exit(2);
  }
  return args[at + 1];
};
const http = args.includes('--http');
const callLog = flag('--call-log');
const era = flag('--era') ?? 'dual';
if (era !== 'modern' && era !== 'dual') {
  console.error(`tsv2server: --era ${era}: want modern or dual`);
  process.exit(2);
}

const name = 'agt-interop-tsv2';
const version = '1.0.0';
const text = (t) => ({ content: [{ type: 'text', text: t }] });

// logCall logs a call of tool, whose context is ctx.
const logCall = (tool, ctx) => {
  if (callLog) {
    appendFileSync(callLog, `${tool} ${ctx?.mcpReq?.envelope?.[PROTOCOL_VERSION_META_KEY] ?? 'legacy'}\n`);
  }
};
// logged wraps the callback of a tool with an input schema to log its
// call first.
const logged = (tool, fn) => (input, ctx) => {
  logCall(tool, ctx);
  return fn(input, ctx);
};

function newServer() {
  const server = new McpServer({ name, version });
  server.registerTool('echo', {
    description: 'Returns its text.',
    inputSchema: z.object({ text: z.string().max(200).describe('the text to return') }),
  }, logged('echo', async ({ text: t }) => text(t)));
  server.registerTool('add', {
    description: 'Adds two numbers.',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
  }, logged('add', async ({ a, b }) => text(String(a + b))));
  server.registerTool('set_level', {
    description: 'Sets a log level.',
    inputSchema: z.object({ level: z.enum(['debug', 'info', 'warn', 'error']) }),
  }, logged('set_level', async ({ level }) => text(`level ${level}`)));
  server.registerTool('open_ticket', {
    description: 'Opens a ticket.',
    inputSchema: z.object({
      id: z.string().regex(/^[A-Z]{2,5}-[0-9]{1,6}$/).describe('project key and number, as ABC-123'),
      priority: z.enum(['low', 'normal', 'high']).optional(),
      title: z.string().min(1).max(80).optional(),
    }),
  }, logged('open_ticket', async ({ id, priority }) => text(`opened ${id} (${priority ?? 'normal'})`)));
  server.registerTool('server_info', {
    description: 'Names the server.',
  }, async (ctx) => {
    // A tool without an input schema gets only the context.
    logCall('server_info', ctx);
    return text(`${name} ${version}`);
  });
  return server;
}

if (!http) {
  serveStdio(newServer, { legacy: era === 'modern' ? 'reject' : 'serve' });
} else {
  const handler = createMcpHandler(newServer, { legacy: era === 'modern' ? 'reject' : 'stateless' });
  // node:http to the handler's web-standard fetch face, and back.
  const httpServer = createServer(async (req, res) => {
    try {
      const url = new URL(req.url, 'http://127.0.0.1');
      if (url.pathname !== '/mcp') {
        res.writeHead(404).end();
        return;
      }
      const chunks = [];
      for await (const c of req) chunks.push(c);
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) {
        for (const one of Array.isArray(v) ? v : [v]) headers.append(k, one);
      }
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
      const response = await handler.fetch(new Request(url, {
        method: req.method, headers, body: hasBody ? Buffer.concat(chunks) : undefined, signal: abort.signal,
      }));
      res.writeHead(response.status, [...response.headers].flat());
      if (response.body) {
        for await (const chunk of response.body) res.write(chunk);
      }
      res.end();
    } catch (err) {
      console.error('tsv2server:', err);
      if (!res.headersSent) res.writeHead(500);
      res.end();
    }
  });
  httpServer.listen(0, '127.0.0.1', () => {
    console.log(`listening on http://127.0.0.1:${httpServer.address().port}/mcp`);
  });
  // The test ends the server by closing its stdin.
  process.stdin.resume();
  process.stdin.on('end', async () => {
    await handler.close().catch(() => {});
    httpServer.closeAllConnections();
    httpServer.close(() => process.exit(0));
  });
}
