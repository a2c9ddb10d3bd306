import { createBashTool } from "./bash.js";
import { createEditFileTool } from "./edit-file.js";
import { createGlobTool } from "./glob.js";
import { createGrepTool } from "./grep.js";
import { createListTool } from "./list.js";
import { createReadFileTool } from "./read-file.js";
import type { Tool, ToolContext } from "./tool.js";
import { createWriteFileTool } from "./write-file.js";

/** Keen's built-in tools, in the order the model is offered them. */
export function createTools(ctx: ToolContext): Tool[] {
  return [
    createBashTool(ctx),
    createReadFileTool(ctx),
    createWriteFileTool(ctx),
    createEditFileTool(ctx),
    createGrepTool(ctx),
    createGlobTool(ctx),
    createListTool(ctx),
  ];
}

// A variable is dropped when one of the `_`-separated words of its name (case-insensitive)
// is one of these: ANTHROPIC_API_KEY, OPENAI_API_KEY, every *_API_KEY, KEEN_*_KEY/_TOKEN,
// GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, npm_config__authToken… Whole words, so
// SSH_AUTH_SOCK, KEYTIMEOUT or TOKENIZERS_PARALLELISM stay. Like codex's default shell
// policy: whatever a command prints goes to the model, and a prompt injection can ask for
// `env`. CLIs that need a token fall back to their own config files (gh, aws, npm).
// Values are not inspected: DATABASE_URL with an inline password stays.
const SECRET_WORDS = new Set(["KEY", "APIKEY", "SECRET", "TOKEN", "AUTHTOKEN", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS"]);

/** True when a variable name looks like it holds a secret (see the rule above). */
export function isSecretEnvName(name: string): boolean {
  return name.toUpperCase().split("_").some((word) => SECRET_WORDS.has(word));
}

/** A copy of `env` for child processes (bash, rg), without provider keys and other secrets. */
export function toolEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && !isSecretEnvName(name)) out[name] = value;
  }
  return out;
}
