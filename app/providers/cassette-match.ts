import { createHash } from "node:crypto";
import { REDACTED } from "../permissions/redact.js";
import type { ProviderKind } from "./registry.js";

/**
 * What a replayed request is matched on: what the run controls. Not the
 * system prompt (its environment section holds the directory and the date),
 * not tool results or assistant turns (the workspace and the cassette itself
 * decide those), not sampling settings.
 */
export interface RequestKey {
  kind: ProviderKind;
  model: string;
  /** Tool names offered, in order. */
  tools: string[];
  /** The text of each user message, in order (tool results left out). */
  prompts: string[];
  /** A digest of each image in the user messages, in order (the prompt's, and on OpenAI read_file's that follow tool answers). */
  images: string[];
}

/** The key of a request body in `kind`'s wire format; tolerant of anything malformed (it then matches nothing). */
export function requestKey(kind: RequestKey["kind"], body: unknown): RequestKey {
  const b = (isObject(body) ? body : {}) as { model?: unknown; tools?: unknown; messages?: unknown };
  const tools = Array.isArray(b.tools) ? b.tools : [];
  const messages = Array.isArray(b.messages) ? b.messages : [];
  return {
    kind,
    model: typeof b.model === "string" ? b.model : "",
    tools: tools.map((t) => String((kind === "openai" ? t?.function?.name : t?.name) ?? "")),
    prompts: messages.flatMap((m) => (isObject(m) && m.role === "user" ? userText(m.content) : [])),
    images: messages.flatMap((m) => (isObject(m) && m.role === "user" && Array.isArray(m.content) ? m.content.flatMap(imageDigest) : [])),
  };
}

/** A short digest of an image part (Anthropic `image` block, OpenAI `image_url` part): enough to tell two images apart. */
function imageDigest(part: unknown): string[] {
  if (!isObject(part)) return [];
  const data = part.type === "image" ? part.source?.data : part.type === "image_url" ? part.image_url?.url : undefined;
  if (typeof data !== "string") return [];
  return [createHash("sha256").update(data.replace(/^data:[^,]*,/, "")).digest("hex").slice(0, 12)];
}

/** The user-authored text of one message, or nothing when it holds only tool results. */
function userText(content: unknown): string[] {
  if (typeof content === "string") return [content];
  if (!Array.isArray(content)) return [];
  const texts = content.flatMap((part) => (isObject(part) && part.type === "text" && typeof part.text === "string" ? [part.text] : []));
  return texts.length > 0 ? [texts.join("\n")] : [];
}

/** A sentence naming the first thing that differs between the recorded and the sent request, or undefined when they match. */
export function describeMismatch(recorded: RequestKey, sent: RequestKey): string | undefined {
  if (recorded.kind !== sent.kind) return `the cassette's request went to an ${recorded.kind}-format API, this one to an ${sent.kind}-format API`;
  if (recorded.model !== sent.model) return `model: the cassette has ${quote(recorded.model)}, this run sent ${quote(sent.model)}`;
  if (recorded.tools.join("\0") !== sent.tools.join("\0")) {
    const missing = recorded.tools.filter((t) => !sent.tools.includes(t));
    const extra = sent.tools.filter((t) => !recorded.tools.includes(t));
    const parts = [missing.length ? `not offered now: ${missing.join(", ")}` : "", extra.length ? `new: ${extra.join(", ")}` : ""].filter(Boolean);
    return `tools: the cassette offered [${recorded.tools.join(", ")}], this run offers [${sent.tools.join(", ")}]${parts.length ? ` (${parts.join("; ")})` : " (another order)"}`;
  }
  const count = Math.max(recorded.prompts.length, sent.prompts.length);
  for (let i = 0; i < count; i++) {
    const a = recorded.prompts[i];
    const b = sent.prompts[i];
    if (a === undefined || b === undefined) {
      return `user messages: the cassette has ${recorded.prompts.length}, this run sent ${sent.prompts.length}`;
    }
    if (!sameText(a, b)) return `user message ${i + 1}: the cassette has ${quote(a)}, this run sent ${quote(b)}`;
  }
  if (recorded.images.join() !== sent.images.join()) {
    return `images: the cassette's user messages carry ${recorded.images.length} (${recorded.images.join(", ") || "none"}), this run sent ${sent.images.length} (${sent.images.join(", ") || "none"})`;
  }
  return undefined;
}

/** Equal, where each `[redacted]` in the recorded text stands for any text (the replaying process may not know that secret). */
function sameText(recorded: string, sent: string): boolean {
  if (recorded === sent) return true;
  if (!recorded.includes(REDACTED)) return false;
  const pattern = recorded.split(REDACTED).map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("[\\s\\S]+?");
  return new RegExp(`^${pattern}$`).test(sent);
}

function quote(text: string): string {
  const short = text.length > 120 ? `${text.slice(0, 117)}...` : text;
  return JSON.stringify(short);
}

const isObject = (v: unknown): v is Record<string, any> => v !== null && typeof v === "object" && !Array.isArray(v);
