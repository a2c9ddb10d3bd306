const OPEN = "<keen_memory>";
const CLOSE = "</keen_memory>";

/**
 * Streaming filter that hides one `<keen_memory>…</keen_memory>` block from
 * visible text. Contract: it holds back only a suffix that could still be the
 * start of a tag; everything else is released at once. An unterminated block
 * hides everything from its open tag on. The raw text is never changed — the
 * caller keeps it separately.
 */
export class MemoryFilter {
  private pending = "";
  private inside = false;
  private memoryParts: string[] = [];
  private sawBlock = false;

  /** Feed a chunk of raw text; returns the visible text it releases. */
  push(chunk: string): string {
    this.pending += chunk;
    let out = "";
    for (;;) {
      const tag = this.inside ? CLOSE : OPEN;
      const at = this.pending.indexOf(tag);
      if (at >= 0) {
        const before = this.pending.slice(0, at);
        if (this.inside) this.memoryParts.push(before);
        else out += before;
        this.pending = this.pending.slice(at + tag.length);
        this.inside = !this.inside;
        if (this.inside) this.sawBlock = true;
        continue;
      }
      const keep = partialTagSuffix(this.pending, tag);
      const release = this.pending.slice(0, this.pending.length - keep);
      if (this.inside) this.memoryParts.push(release);
      else out += release;
      this.pending = this.pending.slice(this.pending.length - keep);
      return out;
    }
  }

  /** End of stream: release held-back text that never became a tag. */
  flush(): string {
    const rest = this.pending;
    this.pending = "";
    if (this.inside) {
      this.memoryParts.push(rest);
      return "";
    }
    return rest;
  }

  /** Inner text of the memory block(s), trimmed; undefined when none appeared. */
  memory(): string | undefined {
    return this.sawBlock ? this.memoryParts.join("").trim() : undefined;
  }
}

/** Length of the longest suffix of `text` that is a proper prefix of `tag`. */
function partialTagSuffix(text: string, tag: string): number {
  const max = Math.min(text.length, tag.length - 1);
  for (let n = max; n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
