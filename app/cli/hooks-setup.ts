import { relative } from "node:path";
import { collectHooks } from "../extensions/hooks-config.js";
import { createHookSet, type HookSet } from "../extensions/hook-points.js";
import { terminalText } from "../headless/terminal-text.js";
import { toolEnv } from "../tools/index.js";
import type { KeenPaths, ResolvedConfig } from "./config.js";

/** Workspaces whose untrusted hooks this process already named on stderr: once is enough. */
const told = new Set<string>();

/**
 * A session's hooks (docs/extensions.md "Hooks"): the user's, and the project's once
 * `keen trust` holds for their current content. A headless front end says once on stderr
 * that untrusted project hooks do not run (the TUI asked before its screen opened).
 * `claude: false` (the CLI runner) leaves `.claude/settings*.json` to the claude CLI, which
 * runs those itself. Hooks run outside the sandbox, like git hooks, with secret-looking
 * variables and provider keys removed from their environment (as for bash).
 */
export function sessionHooks(
  paths: KeenPaths, config: ResolvedConfig, workspace: string, env: NodeJS.ProcessEnv, options: { headless: boolean; claude: boolean },
): HookSet | undefined {
  const collected = collectHooks({
    user: config.hooks, userFile: paths.configFile, project: config.projectHooks, workspace, trust: config.hooksTrust, claude: options.claude,
  });
  if (options.headless && !told.has(workspace) && (collected.untrusted.length || collected.warnings.length)) {
    told.add(workspace);
    for (const warning of collected.warnings) process.stderr.write(`keen: ${terminalText(warning)}\n`);
    if (collected.untrusted.length) {
      const files = [...new Set(collected.untrusted.map((h) => relative(workspace, h.file)))].join(", ");
      const count = collected.untrusted.length;
      process.stderr.write(`keen: ${count} project hook${count === 1 ? "" : "s"} (${terminalText(files)}) not run: this workspace's hooks are not trusted; review them, then run \`keen trust\`\n`);
    }
  }
  return createHookSet(collected.hooks, { workspace, env: toolEnv(env) });
}
