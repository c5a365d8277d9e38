// Starts mcec the way a client built on the official MCP TypeScript SDK does: its
// StdioClientTransport with the SDK's default environment (getDefaultEnvironment(): no
// DISPLAY), plus the two variables tests point mcec's display search with. Calls each tool
// named on the command line and prints {tool: envelope} as one JSON line.
//
//   node client.mjs MCEC_EXE SOCKET_DIR LOGIND_BUS TOOL:ARGS_JSON ...
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport, getDefaultEnvironment } from "@modelcontextprotocol/sdk/client/stdio.js";

const [exe, socketDir, logindBus, ...calls] = process.argv.slice(2);
const env = { ...getDefaultEnvironment(), MCEC_X11_SOCKET_DIR: socketDir, MCEC_LOGIND_BUS: logindBus };
if ("DISPLAY" in getDefaultEnvironment()) throw new Error("the SDK's default environment has DISPLAY");
const transport = new StdioClientTransport({ command: exe, args: ["mcp"], env, stderr: "inherit" });
const client = new Client({ name: "mcec-e2e-ts", version: "1.0.0" });
await client.connect(transport);
const out = {};
for (const call of calls) {
  const at = call.indexOf(":");
  const name = call.slice(0, at);
  const result = await client.callTool({ name, arguments: JSON.parse(call.slice(at + 1)) });
  out[name] = JSON.parse(result.content[result.content.length - 1].text);
}
console.log(JSON.stringify(out));
await client.close();
