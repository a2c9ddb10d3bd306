import type { TokenName } from "../../../themes/index.js";

/**
 * What to set when no provider is configured: the README's provider table,
 * as lines for the transcript (keep the two in step).
 */
export const SETUP_ROWS: [provider: string, set: string, flag: string][] = [
  ["Anthropic", "ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible proxy)", "--model anthropic/claude-sonnet-5-5"],
  ["OpenAI", "OPENAI_API_KEY (and OPENAI_BASE_URL)", "--model openai/gpt-5.4"],
  ["Local server", "OPENAI_BASE_URL=http://127.0.0.1:8080/v1 and any OPENAI_API_KEY", "--model openai/<model>"],
  ["Ollama", "nothing (OLLAMA_BASE_URL to move it)", "--model ollama/qwen3:8b"],
  ["OpenRouter", "OPENROUTER_API_KEY", "--model openrouter/<vendor>/<model>"],
  ["OpenCode Go", "OPENCODE_API_KEY", "--model opencode-go/<model>"],
];

/** The table as styled lines for a width: one row per provider when it fits, else what to set with the flag below it. */
export function setupLines(width: number): [TokenName, string][] {
  const out: [TokenName, string][] = [["accent", "To use Keen, set one provider in the environment of a new run:"]];
  const name = 14;
  for (const [provider, set, flag] of SETUP_ROWS) {
    const one = `  ${provider.padEnd(name)}${set}   ${flag}`;
    if (one.length <= width) out.push(["text", one]);
    else out.push(["text", `  ${provider.padEnd(name)}${set}`], ["dim", `  ${" ".repeat(name)}${flag}`]);
  }
  out.push(["dim", "Or set \"model\" and \"providers\" in Keen's config.json (see the README). /model lists the models Keen can use now."]);
  return out;
}
