// The TypeScript SDK's worker for bench_sdk_clients.py: connects to every server in the
// config with the official SDK's stdio client (default settings, so each result is checked
// against the tool's outputSchema with Ajv), times the ops call by call, round-robin over
// the servers, and prints one JSON line: {sdk, samples: {server: {op: [seconds]}}, failures}.
//
//     node bench/sdk_clients_worker.mjs SDK_PACKAGE_DIR CONFIG_JSON

import { readFileSync, openSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [sdkDir, configPath] = process.argv.slice(2);
const esm = (p) => pathToFileURL(join(sdkDir, "dist/esm", p)).href;
const { Client } = await import(esm("client/index.js"));
const { StdioClientTransport } = await import(esm("client/stdio.js"));
const version = JSON.parse(readFileSync(join(sdkDir, "package.json"), "utf8")).version;
const config = JSON.parse(readFileSync(configPath, "utf8"));

const failed = (r) => Boolean(r.isError) || (r.structuredContent && r.structuredContent.ok === false);

const clients = [];
for (const s of config.servers) {
  const transport = new StdioClientTransport({
    command: s.argv[0],
    args: s.argv.slice(1),
    env: s.env,
    cwd: s.cwd ?? undefined,
    stderr: openSync(join(config.errdir, `${s.key}-ts-stderr.txt`), "a"),
  });
  const client = new Client({ name: "mcec-bench", version: "0" });
  await client.connect(transport);
  await client.listTools();
  clients.push({ key: s.key, ops: s.ops, client });
}

const samples = {};
const failures = {};
const call = (c, op) => c.client.callTool({ name: c.ops[op][0], arguments: c.ops[op][1] });
for (const op of config.ops) {
  for (const c of clients) for (let i = 0; i < config.warmup; i++) await call(c, op);
  for (let i = 0; i < config.iters; i++) {
    for (const c of clients) {
      const t0 = process.hrtime.bigint();
      const r = await call(c, op);
      const dt = Number(process.hrtime.bigint() - t0) / 1e9;
      ((samples[c.key] ??= {})[op] ??= []).push(dt);
      if (failed(r)) failures[`${c.key} ${op}`] = (failures[`${c.key} ${op}`] ?? 0) + 1;
    }
  }
}
for (const c of clients) await c.client.close();
console.log(JSON.stringify({ sdk: `typescript sdk ${version}`, samples, failures }));
process.exit(0);
