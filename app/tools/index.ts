import { createBashTool } from "./bash.js";
import { createEditFileTool } from "./edit-file.js";
import { createGlobTool } from "./glob.js";
import { createGrepTool } from "./grep.js";
import { createJobKillTool } from "./job-kill.js";
import { createJobOutputTool } from "./job-output.js";
import { createListTool } from "./list.js";
import { createReadFileTool } from "./read-file.js";
import { createSkillTool } from "./skill.js";
import type { Redactor } from "../permissions/redact.js";
import type { Tool, ToolContext } from "./tool.js";
import { createTaskTool } from "./task.js";
import { createTodoWriteTool } from "./todo-write.js";
import { createWebFetchTool } from "./web-fetch.js";
import { createWriteFileTool } from "./write-file.js";

/**
 * Keen's built-in tools, in the order the model is offered them. A new tool is
 * its own file (`defineTool` with its `kind`, `describe`, and `sandboxed` when
 * its commands run in `ctx.sandbox`; an `edit` tool's result details carry
 * `path`, `old_text` and `new_text`, which undo restores) plus its line here:
 * the permission gate, undo, the TUI, ACP and the CLI runner read those
 * declarations, never a tool's name (test/tools/new-tool.test.ts). With
 * `ctx.redactor`, no known secret leaves a tool: not in its content, its
 * details, its progress output or the message of an exception.
 */
export function createTools(ctx: ToolContext): Tool[] {
  const tools = [
    createBashTool(ctx),
    createReadFileTool(ctx),
    createWriteFileTool(ctx),
    createEditFileTool(ctx),
    createGrepTool(ctx),
    createGlobTool(ctx),
    createListTool(ctx),
    createTodoWriteTool(),
    createSkillTool(ctx),
    createTaskTool(ctx),
    createWebFetchTool(ctx),
    ...(ctx.jobs ? [createJobOutputTool(ctx), createJobKillTool(ctx)] : []),
  ];
  const redactor = ctx.redactor;
  return redactor?.active ? tools.map((tool) => withRedaction(tool, redactor)) : tools;
}

/** `tool` with its results, progress output and exception messages redacted. */
export function withRedaction(tool: Tool, redactor: Redactor): Tool {
  const preview = tool.preview;
  return {
    // What the tool declares about itself (kind, mutates, sandboxed, shell, …) stays as it is.
    ...tool,
    // A title may quote a secret too (a bash command with a token in it).
    ...(tool.describe ? { describe: (args: Record<string, unknown>) => redactor.redactDeep(tool.describe!(args)) } : {}),
    // A diff shown for approval may quote a file's secret too.
    ...(preview ? { preview: async (input: unknown) => redactor.redactDeep(await preview.call(tool, input)) } : {}),
    async run(input, call) {
      const stream = redactor.stream();
      const onOutput = call.onOutput && ((chunk: string) => {
        const clean = stream.push(chunk);
        if (clean) call.onOutput!(clean);
      });
      try {
        const result = redactor.redactDeep(await tool.run(input, { ...call, onOutput }));
        const rest = stream.end();
        if (rest) call.onOutput?.(rest);
        return result;
      } catch (error) {
        throw new Error(redactor.redact(error instanceof Error ? error.message : String(error)));
      }
    },
  };
}

// THE rule for secret-looking variable names (the child-process scrub below and the
// redactor's list of values to hide both use it). A name is secret when, split on `_`
// and upper-cased, one of its words
//   - is KEY, APIKEY, SECRET, SECRETS, TOKEN, PASSWORD, PASSWD, PASS, PASSPHRASE, PAT,
//     CREDENTIAL or CREDENTIALS (ANTHROPIC_API_KEY, GITHUB_TOKEN, GH_PAT, SMTP_PASS), or
//   - ends with PASSWORD, PASSWD, SECRET, TOKEN or APIKEY glued to another word
//     (PGPASSWORD, MYSECRET, GITLABTOKEN, npm_config__authToken).
// Whole words and word endings only, so SSH_AUTH_SOCK, KEYTIMEOUT, TOKENIZERS_PARALLELISM
// or MAX_TOKENS stay. Like codex's default shell policy: whatever a command prints goes
// to the model, and a prompt injection can ask for `env`. CLIs that need a token fall
// back to their own config files (gh, aws, npm). Values are not inspected: DATABASE_URL
// with an inline password stays (README, "Security").
const SECRET_WORDS = new Set([
  "KEY", "APIKEY", "SECRET", "SECRETS", "TOKEN", "PASSWORD", "PASSWD", "PASS", "PASSPHRASE", "PAT", "CREDENTIAL", "CREDENTIALS",
]);
const SECRET_ENDINGS = /(PASSWORD|PASSWD|SECRET|TOKEN|APIKEY)$/;

/** True when a variable name looks like it holds a secret (see the rule above). */
export function isSecretEnvName(name: string): boolean {
  return name.toUpperCase().split("_").some((word) => SECRET_WORDS.has(word) || SECRET_ENDINGS.test(word));
}

/** A copy of `env` for child processes (bash, rg), without provider keys and other secrets. */
export function toolEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isSecretEnvName(name)) out[name] = value;
  }
  return out;
}
