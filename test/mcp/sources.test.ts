import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { collectMcpServers, type McpSourcesInput } from "../../app/mcp/sources.js";
import { hashFile } from "../../app/mcp/trust.js";
import { isSecretEnvName } from "../../app/tools/index.js";
import { makeTempDir } from "../temp.js";

function input(workspace: string, extra: Partial<McpSourcesInput> = {}): McpSourcesInput {
  return { userFile: "/u/config.json", workspace, env: { HOME: "/h" }, providerKeyNames: ["ANTHROPIC_API_KEY"], isSecretName: isSecretEnvName, ...extra };
}

test("sources: user < trusted project < --mcp-config < client; an untrusted project is listed, not started", () => {
  const ws = makeTempDir("keen-mcp-src-");
  const flag = join(ws, "flag.json");
  writeFileSync(join(ws, ".mcp.json"), JSON.stringify({ mcpServers: { a: { command: "project-a" }, p: { command: "project-p" } } }));
  writeFileSync(flag, JSON.stringify({ mcpServers: { b: { command: "flag-b" } } }));
  const user = { a: { command: "user-a" }, b: { command: "user-b" }, c: { command: "user-c" } };
  const untrusted = collectMcpServers(input(ws, { user, flagFiles: [flag] }));
  assert.deepEqual(untrusted.servers.map((s) => [s.name, s.source, "command" in s.config && s.config.command]), [
    ["a", "user", "user-a"], ["b", "flag", "flag-b"], ["c", "user", "user-c"],
  ]);
  assert.deepEqual(untrusted.untrusted.map((s) => s.name), ["a", "p"]);

  const trust = { [ws]: { sha256: hashFile(join(ws, ".mcp.json"))! } };
  const client = { c: { type: "http" as const, url: "http://client" } };
  const trusted = collectMcpServers(input(ws, { user, flagFiles: [flag], trust, client }));
  assert.deepEqual(trusted.servers.map((s) => [s.name, s.source]), [["a", "project"], ["b", "flag"], ["c", "client"], ["p", "project"]]);
  assert.deepEqual(trusted.untrusted, []);

  writeFileSync(join(ws, ".mcp.json"), "{ not json");
  const broken = collectMcpServers(input(ws, { trust }));
  assert.equal(broken.servers.length, 0);
  assert.match(broken.warnings[0]!, /\.mcp\.json: not valid JSON/);
});
