import type { Message } from "../../protocol/messages.js";

/**
 * Deepest nesting of arrays and objects a tool input may have. Real inputs nest
 * a few levels; JSON.stringify, structuredClone, zod and ajv recurse and
 * overflow the stack somewhere past a few thousand, and every input is
 * stringified (the tool-use event, the store, the next request).
 */
export const MAX_INPUT_DEPTH = 64;

/** Most characters a tool input may hold (strings and keys, plus one per value): far above any real call. */
export const MAX_INPUT_CHARS = 8 * 1024 * 1024;

/**
 * Why a tool input from the model cannot be used, or undefined when it can.
 * Contract: never throws and never recurses, whatever the value's depth or size
 * (it stops at the first limit crossed).
 */
export function checkToolInput(input: unknown): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: input, depth: 0 }];
  let chars = 0;
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    // One per value too, so a huge array of numbers counts as well as a long string.
    chars += typeof value === "string" ? value.length + 1 : 1;
    if (value === null || typeof value !== "object") {
      if (chars > MAX_INPUT_CHARS) return `it is larger than ${MAX_INPUT_CHARS / (1024 * 1024)} MB`;
      continue;
    }
    if (depth >= MAX_INPUT_DEPTH) return `it nests deeper than ${MAX_INPUT_DEPTH} levels`;
    if (Array.isArray(value)) {
      for (const item of value) stack.push({ value: item, depth: depth + 1 });
    } else {
      for (const [key, item] of Object.entries(value)) {
        chars += key.length;
        stack.push({ value: item, depth: depth + 1 });
      }
    }
  }
  return chars > MAX_INPUT_CHARS ? `it is larger than ${MAX_INPUT_CHARS / (1024 * 1024)} MB` : undefined;
}

/** The message with the inputs of the calls listed in `refused` replaced by `{}`, so it can be stored and sent again. */
export function withoutInputs(message: Message, refused: ReadonlySet<string>): Message {
  if (refused.size === 0) return message;
  return {
    ...message,
    content: message.content.map((block) => (block.type === "tool_call" && refused.has(block.id) ? { ...block, input: {} } : block)),
  };
}
