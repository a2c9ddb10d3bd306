import { readFileSync } from "node:fs";
import { createInterface } from "node:readline/promises";
import { currentTrust, hashBytes, projectMcpFile, writeTrust } from "../mcp/trust.js";
import { terminalText } from "../headless/terminal-text.js";
import type { KeenPaths, ResolvedConfig } from "./config.js";

/**
 * The TUI asks once about a workspace's untrusted `.mcp.json` (issue 16), on the terminal
 * before the full screen opens: it lists what would run and records the answer in the user
 * config like `keen mcp trust` (yes) or as declined (no), bound to the file's content, so
 * the question comes back only when the file changes. Headless front ends never ask.
 * Returns whether the answer changed the config (the caller then reloads it).
 */
export async function askMcpTrustOnce(
  paths: KeenPaths, config: ResolvedConfig, workspace: string, input: NodeJS.ReadableStream, output: NodeJS.WritableStream,
): Promise<boolean> {
  const file = projectMcpFile(workspace);
  let bytes: Buffer;
  try {
    bytes = readFileSync(file);
  } catch {
    return false;
  }
  const sha256 = hashBytes(bytes);
  if (currentTrust(config.mcpTrust, workspace, bytes) || config.mcpTrust?.[workspace]?.sha256 === sha256) return false;
  const lines = describeServers(bytes);
  // A file that does not parse is reported by the normal path (a warning), not asked about.
  if (!lines) return false;
  const rl = createInterface({ input, output });
  let answer: string;
  try {
    answer = await rl.question(
      `keen: ${terminalText(file)} would start these MCP servers (commands of the repository's choosing):\n${lines}` +
      "Trust them for this workspace? Any change to the file asks again. [y/N] ",
    );
  } finally {
    rl.close();
  }
  const yes = /^\s*y(es)?\s*$/i.test(answer);
  writeTrust(paths.configFile, workspace, yes ? { sha256 } : { sha256, declined: true });
  output.write(yes ? "keen: trusted (keen mcp untrust takes it back)\n" : "keen: not trusted; `keen mcp trust` in this workspace changes that\n");
  return true;
}

function describeServers(bytes: Buffer): string | undefined {
  try {
    const servers = (JSON.parse(bytes.toString("utf8")) as { mcpServers?: Record<string, Record<string, unknown>> }).mcpServers;
    if (!servers || typeof servers !== "object" || !Object.keys(servers).length) return undefined;
    return Object.entries(servers).map(([name, s]) => {
      const what = typeof s?.url === "string" ? s.url : [s?.command, ...(Array.isArray(s?.args) ? s.args : [])].join(" ");
      return `  ${terminalText(name)}: ${terminalText(String(what))}\n`;
    }).join("");
  } catch {
    return undefined;
  }
}
