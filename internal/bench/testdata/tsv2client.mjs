// A client on the TypeScript SDK v2 (@modelcontextprotocol/client, pinned
// in the package.json at the root of the repository) that the Go
// benchmarks of internal/bench drive, so that its calls are measured on
// the same servers as the Go clients:
//
//   node tsv2client.mjs --http URL            connect over streamable HTTP
//   node tsv2client.mjs --stdio CMD ARG...    start CMD and connect over stdio
//
// It connects negotiating the protocol version (versionNegotiation mode
// 'auto'), then writes "ready VERSION" (the version negotiated). Each
// line "N C TOOL ARGS" on stdin makes it run N rounds of C calls of TOOL
// with the JSON ARGS at once (a round waits for its C calls), and write
// "NS" (the nanoseconds the rounds took by its own clock) or "error
// MESSAGE". It ends when stdin ends.
import { createInterface } from 'node:readline';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const args = process.argv.slice(2);
let transport;
if (args[0] === '--http' && args.length === 2) {
  transport = new StreamableHTTPClientTransport(new URL(args[1]));
} else if (args[0] === '--stdio' && args.length >= 2) {
  transport = new StdioClientTransport({ command: args[1], args: args.slice(2), stderr: 'inherit' });
} else {
  console.error('tsv2client: want --http URL or --stdio CMD ARG...');
  process.exit(2);
}

// The SDK's default negotiation mode is 'legacy' (initialize only); 'auto'
// probes with server/discover and falls back, as agt and the Go clients do.
const client = new Client({ name: 'agt-bench-tsv2', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
await client.connect(transport);
console.log(`ready ${client.getNegotiatedProtocolVersion()}`);

// rounds runs n rounds of c calls of tool at once.
async function rounds(n, c, tool, toolArgs) {
  const call = async () => {
    const res = await client.callTool({ name: tool, arguments: toolArgs });
    if (res.isError || res.content?.[0]?.text !== toolArgs.text) {
      throw new Error(`${tool}: unexpected result ${JSON.stringify(res)}`);
    }
  };
  for (let i = 0; i < n; i++) {
    if (c === 1) await call();
    else await Promise.all(Array.from({ length: c }, call));
  }
}

const lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of lines) {
  const [n, c, tool, ...rest] = line.split(' ');
  try {
    const t0 = process.hrtime.bigint();
    await rounds(Number(n), Number(c), tool, JSON.parse(rest.join(' ')));
    console.log(String(process.hrtime.bigint() - t0));
  } catch (err) {
    console.log(`error ${String(err?.message ?? err).replace(/\n/g, ' ')}`);
  }
}
await client.close();
