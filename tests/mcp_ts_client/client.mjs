// A bot written in TypeScript/JavaScript, as the README shows one: the MCP TypeScript SDK's
// streamable HTTP client calls memory-curator's tools, one session per call (as Home
// Assistant does). Usage: node client.mjs <url> [token]; prints one JSON object.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, token] = process.argv.slice(2);
const headers = token ? { Authorization: `Bearer ${token}` } : {};

async function withSession(work) {
  const client = new Client({ name: "ts-bot", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  await client.connect(transport);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

async function call(name, args) {
  return withSession(async (client) => {
    const result = await client.callTool({ name, arguments: args });
    return { isError: Boolean(result.isError), text: result.content[0].text };
  });
}

const tools = await withSession(async (client) => (await client.listTools()).tools);
const added = await call("manage_memory", { action: "add", content: "The robot vacuum is called Dusty." });
const id = /\[([0-9a-f]+)\]/.exec(added.text)[1];
const recalled = await call("recall", {});
const found = await call("manage_memory", { action: "search", keyword: "dusty" });
const updated = await call("manage_memory", { action: "update", id, content: "The robot vacuum is called Rusty." });
const deleted = await call("manage_memory", { action: "delete", id });
console.log(
  JSON.stringify({
    tools: tools.map((tool) => ({ name: tool.name, annotations: tool.annotations })),
    added,
    recalled,
    found,
    updated,
    deleted,
  }),
);
