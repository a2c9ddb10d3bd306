/** A piece of streamed content, classified as visible text or thinking. */
export interface ThinkSegment {
  kind: "text" | "thinking";
  text: string;
}

/** Splits streamed content on `<think>`/`</think>`; see createThinkTagSplitter. */
export interface ThinkTagSplitter {
  /** Feed one content delta; returns what can be classified now. */
  push(chunk: string): ThinkSegment[];
  /** End of stream: releases held-back characters as whatever is open. */
  flush(): ThinkSegment[];
}

const OPEN = "<think>";
const CLOSE = "</think>";

/**
 * OpenAI-compatible servers for reasoning models (DeepSeek, Qwen, …) put the
 * reasoning inline as `<think>…</think>`. A tag may be split across deltas at
 * any character, so the splitter holds back only a suffix that could still
 * grow into the tag it is waiting for; everything else is released at once.
 * Whitespace right after a tag is dropped: models put "\n\n" there, and it
 * would otherwise open an empty-looking text block.
 */
export function createThinkTagSplitter(): ThinkTagSplitter {
  let inThink = false;
  let held = "";
  let skipWhitespace = false;

  const emit = (out: ThinkSegment[], text: string) => {
    if (skipWhitespace) {
      text = text.replace(/^\s+/, "");
      if (text === "") return;
      skipWhitespace = false;
    }
    if (text === "") return;
    const kind = inThink ? "thinking" : "text";
    const last = out[out.length - 1];
    if (last && last.kind === kind) last.text += text;
    else out.push({ kind, text });
  };

  return {
    push(chunk) {
      const out: ThinkSegment[] = [];
      let rest = held + chunk;
      held = "";
      for (;;) {
        const tag = inThink ? CLOSE : OPEN;
        const at = rest.indexOf(tag);
        if (at < 0) break;
        emit(out, rest.slice(0, at));
        inThink = !inThink;
        skipWhitespace = true;
        rest = rest.slice(at + tag.length);
      }
      const keep = partialTagSuffix(rest, inThink ? CLOSE : OPEN);
      emit(out, rest.slice(0, rest.length - keep));
      held = rest.slice(rest.length - keep);
      return out;
    },
    flush() {
      const out: ThinkSegment[] = [];
      emit(out, held);
      held = "";
      return out;
    },
  };
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagSuffix(text: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, text.length); n > 0; n--) {
    if (text.endsWith(tag.slice(0, n))) return n;
  }
  return 0;
}
