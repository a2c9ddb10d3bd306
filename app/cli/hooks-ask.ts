import { createInterface } from "node:readline/promises";
import { describeProjectHooks, digestProjectHooks } from "../extensions/hooks-config.js";
import { terminalText } from "../headless/terminal-text.js";
import { writeTrust } from "../mcp/trust.js";
import type { KeenPaths, ResolvedConfig } from "./config.js";

/**
 * The TUI asks once about a workspace's untrusted project hooks, on the terminal before the
 * full screen opens (as for `.mcp.json`, app/cli/mcp-ask.ts): it lists the commands and
 * records the answer like `keen trust` (yes) or as declined (no), bound to the hooks'
 * digest, so the question comes back only when they change. Returns whether it asked.
 */
export async function askHooksTrustOnce(
  paths: KeenPaths, config: ResolvedConfig, workspace: string, input: NodeJS.ReadableStream, output: NodeJS.WritableStream,
): Promise<boolean> {
  const sha256 = digestProjectHooks(workspace, config.projectHooks);
  if (!sha256 || config.hooksTrust?.[workspace]?.sha256 === sha256) return false;
  const lines = describeProjectHooks(workspace, config.projectHooks).map((l) => `  ${terminalText(l)}\n`).join("");
  const rl = createInterface({ input, output });
  let answer: string;
  try {
    answer = await rl.question(
      `keen: this workspace configures hooks (commands of the repository's choosing, run outside the sandbox):\n${lines}` +
      "Run them? Any change to them asks again. [y/N] ",
    );
  } finally {
    rl.close();
  }
  const yes = /^\s*y(es)?\s*$/i.test(answer);
  writeTrust(paths.configFile, workspace, yes ? { sha256 } : { sha256, declined: true }, "hooksTrust");
  output.write(yes ? "keen: hooks trusted (keen untrust takes it back)\n" : "keen: hooks not trusted; `keen trust` in this workspace changes that\n");
  return true;
}
