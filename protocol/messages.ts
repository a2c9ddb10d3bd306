import * as z from "zod";
import { IMAGE_MEDIA_TYPES } from "./media.js";

export { IMAGE_MEDIA_TYPES } from "./media.js";
/** One of IMAGE_MEDIA_TYPES. */
export const ImageMediaTypeSchema = z.enum(IMAGE_MEDIA_TYPES);
export type ImageMediaType = z.infer<typeof ImageMediaTypeSchema>;

/** One block of a conversation message, provider-neutral. */
export const ContentBlockSchema = z.discriminatedUnion("type", [
  z.object({
    type: z.literal("text"), text: z.string(),
    /** Context Keen put before the prompt (the user's `!command`s): sent to the model, not shown as what the user typed. */
    context: z.literal(true).optional(),
  }),
  /** Anthropic signs thinking blocks; they go back unchanged within a turn. */
  z.object({ type: z.literal("thinking"), thinking: z.string(), signature: z.string().optional() }),
  z.object({ type: z.literal("redacted_thinking"), data: z.string() }),
  z.object({ type: z.literal("tool_call"), id: z.string(), name: z.string(), input: z.unknown() }),
  /** An image the user sent with a prompt (base64, already within Keen's caps); `name` says where it came from. */
  z.object({ type: z.literal("image"), media_type: ImageMediaTypeSchema, data: z.string(), name: z.string().optional() }),
  z.object({
    type: z.literal("tool_result"),
    tool_call_id: z.string(),
    content: z.string(),
    is_error: z.boolean(),
    /** Images a tool returned (read_file, MCP): sent to providers that take images in tool results; `content` describes them for the others. */
    images: z.array(z.object({ media_type: z.string(), data: z.string() })).optional(),
  }),
]);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

/** A conversation message as Keen stores it and hands it to providers. */
export const MessageSchema = z.object({
  role: z.enum(["user", "assistant"]),
  content: z.array(ContentBlockSchema),
  /** On user messages: nobody can answer follow-ups (every `keen run`). */
  headless: z.boolean().optional(),
});
export type Message = z.infer<typeof MessageSchema>;

/** Token usage normalised across providers (see README "usage"). */
export const UsageSchema = z.object({
  input_tokens: z.number().int(),
  cached_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
  output_tokens: z.number().int(),
  reasoning_tokens: z.number().int(),
  total_tokens: z.number().int(),
});
export type Usage = z.infer<typeof UsageSchema>;
