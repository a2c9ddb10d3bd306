import type { TokenName } from "../../../themes/index.js";

/**
 * What to set when no provider is configured: the README's provider table,
 * as lines for the transcript (keep the two in step).
 */
export const SETUP_LINES: [TokenName, string][] = [
  ["accent", "To use Keen, set one provider in the environment of a new run:"],
  ["text", "  Anthropic     ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for a compatible proxy)   --model anthropic/claude-sonnet-5-5"],
  ["text", "  OpenAI        OPENAI_API_KEY (and OPENAI_BASE_URL)   --model openai/gpt-5.4"],
  ["text", "  Local server  OPENAI_BASE_URL=http://127.0.0.1:8080/v1 and any OPENAI_API_KEY   --model openai/<model>"],
  ["text", "  Ollama        nothing (OLLAMA_BASE_URL to move it)   --model ollama/qwen3:8b"],
  ["text", "  OpenRouter    OPENROUTER_API_KEY   --model openrouter/<vendor>/<model>"],
  ["text", "  OpenCode Go   OPENCODE_API_KEY   --model opencode-go/<model>"],
  ["dim", "Or put \"model\" and \"providers\" in ~/.config/keen/config.json (see the README). /model lists the models Keen can use now."],
];

/** True when an engine error means no provider or key is configured. */
export function isSetupError(message: string): boolean {
  return /no provider configured|needs an API key|no API key|API key is missing|set (ANTHROPIC|OPENAI)_API_KEY/i.test(message);
}
