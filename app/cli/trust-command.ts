import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { describeProjectHooks, digestProjectHooks } from "../extensions/hooks-config.js";
import { terminalText } from "../headless/terminal-text.js";
import { projectMcpFile, writeTrust } from "../mcp/trust.js";
import { findWorkspace } from "../tools/workspace.js";
import { keenPaths, loadConfig } from "./config.js";
import { UsageError } from "./errors.js";
import { mcpTrust, mcpUntrust } from "./mcp-command.js";

/**
 * `keen trust`: the one command for what a repository would run: its `.mcp.json` servers
 * (as `keen mcp trust`) and its hooks (`.keen/config.json`, `.claude/settings*.json`). Each
 * is bound to a digest of its content (for hooks, also of the scripts they name), so any
 * change revokes it. Shows what will run, so the decision is an informed one.
 */
export async function trustCommand(flags: { cwd?: string; allowEnv?: string }): Promise<number> {
  const paths = keenPaths();
  const workspace = findWorkspace(resolve(flags.cwd ?? process.cwd()));
  const config = loadConfig(paths, workspace);
  const mcp = existsSync(projectMcpFile(workspace));
  const lines = describeProjectHooks(workspace, config.projectHooks);
  const digest = digestProjectHooks(workspace, config.projectHooks);
  if (!mcp && !digest) {
    throw new UsageError(`nothing to trust in ${workspace}: no .mcp.json and no project hooks (.keen/config.json, .claude/settings.json)`);
  }
  if (mcp) await mcpTrust({ cwd: workspace, allowEnv: flags.allowEnv });
  if (digest) {
    writeTrust(paths.configFile, workspace, { sha256: digest }, "hooksTrust");
    process.stdout.write(`${terminalText([`Trusted the hooks of ${workspace} (any change to them or to the scripts they name revokes this):`, ...lines.map((l) => `  ${l}`)].join("\n"))}\n`);
  }
  return 0;
}

/** `keen untrust`: forgets both decisions for the workspace. */
export async function untrustCommand(flags: { cwd?: string }): Promise<number> {
  const paths = keenPaths();
  const workspace = findWorkspace(resolve(flags.cwd ?? process.cwd()));
  const config = loadConfig(paths, workspace);
  if (config.mcpTrust?.[workspace]) await mcpUntrust({ cwd: workspace });
  if (config.hooksTrust?.[workspace]) {
    writeTrust(paths.configFile, workspace, undefined, "hooksTrust");
    process.stdout.write(`${workspace}: project hooks no longer trusted.\n`);
  }
  if (!config.mcpTrust?.[workspace] && !config.hooksTrust?.[workspace]) process.stdout.write(`${workspace} was not trusted.\n`);
  return 0;
}
