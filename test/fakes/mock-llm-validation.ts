/**
 * What the real Anthropic and OpenAI APIs refuse with a 400, for the mock LLM
 * server: a lenient test server would hide exactly the bugs these catch.
 * Each function returns the vendor's error message, or null when the request
 * would be accepted. Messages follow the real APIs' wording.
 */

const THINKING_DOCS = "Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking";

type Block = { type: string; [key: string]: any };
type AnthropicMessage = { role: string; content: string | Block[] };

const blocksOf = (m: AnthropicMessage): Block[] => (typeof m.content === "string" ? [] : m.content ?? []);

/** Anthropic Messages API rules Keen has to get right. */
export function validateAnthropic(body: any): string | null {
  if (body.stream !== true) return "mock LLM server: Keen always streams; send stream: true";
  const messages: AnthropicMessage[] = Array.isArray(body.messages) ? body.messages : [];
  const hasTools = Array.isArray(body.tools) && body.tools.length > 0;
  const thinking = body.thinking?.type === "enabled" || body.thinking?.type === "adaptive";

  if (body.thinking?.type === "enabled") {
    const budget = body.thinking.budget_tokens;
    if (!(budget >= 1024)) return "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024";
    if (!(body.max_tokens > budget)) {
      return `\`max_tokens\` must be greater than \`thinking.budget_tokens\`. ${THINKING_DOCS}#max-tokens-and-context-window-size`;
    }
  }
  if (thinking && (body.tool_choice?.type === "any" || body.tool_choice?.type === "tool")) {
    return "Thinking may not be enabled when tool_choice forces tool use.";
  }

  let cacheControls = 0;
  const count = (x: any) => void (x?.cache_control ? cacheControls++ : 0);
  (Array.isArray(body.system) ? body.system : []).forEach(count);
  (Array.isArray(body.tools) ? body.tools : []).forEach(count);

  for (const [i, message] of messages.entries()) {
    for (const [j, block] of blocksOf(message).entries()) {
      count(block);
      if ((block.type === "tool_use" || block.type === "tool_result") && !hasTools) {
        return "Requests which include `tool_use` or `tool_result` blocks must define tools.";
      }
      if (block.type === "text" && block.text === "") return "messages: text content blocks must be non-empty";
      if (block.type === "thinking" && (typeof block.signature !== "string" || block.signature === "")) {
        return `messages.${i}.content.${j}.thinking.signature: Field required`;
      }
      if ((block.type === "thinking" || block.type === "redacted_thinking") && block.cache_control) {
        return `messages.${i}.content.${j}.${block.type}.cache_control: Extra inputs are not permitted`;
      }
    }
    const problem = toolPairing(messages, i);
    if (problem) return problem;
  }
  if (cacheControls > 4) return `A maximum of 4 blocks with cache_control may be provided. Found ${cacheControls}.`;

  if (thinking) {
    const lastAssistant = messages.map((m) => m.role).lastIndexOf("assistant");
    const blocks = lastAssistant >= 0 ? blocksOf(messages[lastAssistant]!) : [];
    const first = blocks[0]?.type;
    if (blocks.some((b) => b.type === "tool_use") && first !== "thinking" && first !== "redacted_thinking") {
      return (
        `messages.${lastAssistant}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first}\`. ` +
        "When `thinking` is enabled, a final `assistant` message must start with a thinking block (preceeding the lastmost set of " +
        "`tool_use` and `tool_result` blocks). We recommend you include thinking blocks from previous turns. To avoid this " +
        `requirement, disable \`thinking\`. ${THINKING_DOCS}`
      );
    }
  }
  return null;
}

/** Every tool_result answers a tool_use of the message before; every tool_use is answered in the next one. */
function toolPairing(messages: AnthropicMessage[], i: number): string | null {
  const message = messages[i]!;
  const previous = i > 0 ? blocksOf(messages[i - 1]!) : [];
  const asked = new Set(messages[i - 1]?.role === "assistant" ? previous.filter((b) => b.type === "tool_use").map((b) => b.id) : []);
  for (const [j, block] of blocksOf(message).entries()) {
    if (block.type === "tool_result" && !asked.has(block.tool_use_id)) {
      return (
        `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. ` +
        "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
      );
    }
  }
  const next = messages[i + 1];
  if (message.role === "assistant" && next) {
    const answered = new Set(blocksOf(next).filter((b) => b.type === "tool_result").map((b) => b.tool_use_id));
    const missing = blocksOf(message).filter((b) => b.type === "tool_use" && !answered.has(b.id)).map((b) => b.id);
    if (missing.length > 0) {
      return (
        `messages.${i}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. ` +
        "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
      );
    }
  }
  return null;
}

/** OpenAI Chat Completions rules Keen has to get right; `refuse` lists parameters this "model" rejects. */
export function validateOpenAI(body: any, refuse: string[]): string | null {
  if (body.stream !== true) return "mock LLM server: Keen always streams; send stream: true";
  for (const name of refuse) {
    if (body[name] !== undefined) {
      const hint = name === "max_tokens" ? " Use 'max_completion_tokens' instead." : "";
      return `Unsupported parameter: '${name}' is not supported with this model.${hint}`;
    }
  }
  if (Array.isArray(body.tools) && body.tools.length === 0) return "[] is too short - 'tools'";
  if (body.tool_choice !== undefined && !Array.isArray(body.tools)) {
    return "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.";
  }
  const messages: any[] = Array.isArray(body.messages) ? body.messages : [];
  for (const [i, message] of messages.entries()) {
    if (message.role === "tool") {
      let k = i - 1;
      while (k >= 0 && messages[k].role === "tool") k--;
      const ids = (messages[k]?.role === "assistant" ? messages[k].tool_calls ?? [] : []).map((c: any) => c.id);
      if (!ids.includes(message.tool_call_id)) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
    }
    if (message.role === "assistant" && Array.isArray(message.tool_calls) && i + 1 < messages.length) {
      const answered = new Set<string>();
      for (let k = i + 1; k < messages.length && messages[k].role === "tool"; k++) answered.add(messages[k].tool_call_id);
      const missing = message.tool_calls.map((c: any) => c.id).filter((id: string) => !answered.has(id));
      if (missing.length > 0) {
        return (
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          `The following tool_call_ids did not have response messages: ${missing.join(", ")}`
        );
      }
    }
  }
  return null;
}
