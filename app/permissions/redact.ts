/** What a known secret value is replaced with wherever Keen could show or store it. */
export const REDACTED = "[redacted]";

/** Shorter values are never treated as secrets, so an ordinary value (`false`, `1`) is never masked. */
export const MIN_SECRET_LENGTH = 8;

/** Replaces known secret values with REDACTED. */
export interface Redactor {
  /** False when there is nothing to hide: every method returns its input. */
  readonly active: boolean;
  /** `text` with every occurrence of a secret (and its variants) replaced. */
  redact(text: string): string;
  /**
   * Every string inside `value` (objects, arrays, any depth) redacted. Copy on
   * write: returns `value` itself when it holds no secret. Iterative, so input
   * of any depth cannot overflow the stack.
   */
  redactDeep<T>(value: T): T;
  /** A redactor for a stream of chunks: a secret split across chunks is still caught. */
  stream(): StreamRedactor;
}

/** Redacts a chunked stream; holds back only a tail that could be the start of a secret (shorter than the longest one). */
export interface StreamRedactor {
  /** The redacted text that is safe to pass on now. */
  push(chunk: string): string;
  /** The rest, redacted; call once at the end. */
  end(): string;
}

// PEM armour lines are public markers, not secret material.
const PEM_ARMOUR = /^-----(BEGIN|END) [A-Z0-9 ]+-----$/;

/**
 * The forms a secret value can take in text Keen handles: the value itself,
 * trimmed (a key read with its trailing newline), each line of a multi-line
 * value (a PEM key, a key with a stray newline: tools print it line by line),
 * and the JSON-escaped form of each (SDK errors and JSON quote values).
 */
export function secretVariants(value: string): string[] {
  const forms = new Set<string>([value, value.trim()]);
  for (const line of value.split(/\r?\n|\r/)) forms.add(line.trim());
  for (const form of [...forms]) forms.add(JSON.stringify(form).slice(1, -1));
  return [...forms].filter((form) => form.length >= MIN_SECRET_LENGTH && !PEM_ARMOUR.test(form));
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Builds a redactor for `values` (only those of at least MIN_SECRET_LENGTH
 * characters count). One combined regular expression, built once: longer
 * forms come first, so the whole value wins over one of its lines.
 */
export function createRedactor(values: Iterable<string | undefined>): Redactor {
  const forms = new Set<string>();
  for (const value of values) if (value) for (const form of secretVariants(value)) forms.add(form);
  if (forms.size === 0) return INACTIVE;
  const sorted = [...forms].sort((a, b) => b.length - a.length);
  const source = sorted.map(escapeRegExp).join("|");
  const global = new RegExp(source, "g");
  const probe = new RegExp(source);
  const longest = sorted[0]!.length;
  const byFirstChar = new Map<string, string[]>();
  for (const form of sorted) byFirstChar.set(form[0]!, [...(byFirstChar.get(form[0]!) ?? []), form]);

  const redact = (text: string) => (text.length >= MIN_SECRET_LENGTH && probe.test(text) ? text.replace(global, REDACTED) : text);
  const holds = (value: unknown): boolean => {
    const stack = [value];
    while (stack.length > 0) {
      const item = stack.pop();
      if (typeof item === "string") {
        if (item.length >= MIN_SECRET_LENGTH && probe.test(item)) return true;
      } else if (item !== null && typeof item === "object") {
        for (const child of Object.values(item)) stack.push(child);
      }
    }
    return false;
  };
  const redactDeep = <T>(value: T): T => (holds(value) ? (cloneRedacted(value, redact) as T) : value);

  return {
    active: true,
    redact,
    redactDeep,
    stream() {
      let held = "";
      return {
        push(chunk) {
          held += chunk;
          const keep = possibleSecretStart(held);
          let out = "";
          let pos = 0;
          let cut = keep;
          global.lastIndex = 0;
          // Matches that start before `keep` are complete: redact them, even one that runs past it.
          for (let m = global.exec(held); m && m.index < keep; m = global.exec(held)) {
            out += held.slice(pos, m.index) + REDACTED;
            pos = m.index + m[0].length;
            if (pos > cut) cut = pos;
          }
          global.lastIndex = 0;
          out += held.slice(pos, cut);
          held = held.slice(cut);
          return out;
        },
        end() {
          const rest = redact(held);
          held = "";
          return rest;
        },
      };
    },
  };

  /**
   * The first index from which `text` could be the beginning of a secret that
   * has not fully arrived (text.length when none). Only that part is held back,
   * so progress output that cannot start a secret is passed on at once.
   */
  function possibleSecretStart(text: string): number {
    for (let p = Math.max(0, text.length - longest + 1); p < text.length; p++) {
      const candidates = byFirstChar.get(text[p]!);
      if (!candidates) continue;
      const rest = text.length - p;
      for (const form of candidates) if (form.length > rest && text.startsWith(form.slice(0, rest), p)) return p;
    }
    return text.length;
  }
}

const INACTIVE: Redactor = {
  active: false,
  redact: (text) => text,
  redactDeep: (value) => value,
  stream: () => ({ push: (chunk) => chunk, end: () => "" }),
};

/** A deep copy of `value` with every string redacted; iterative (no recursion depth limit). */
function cloneRedacted(value: unknown, redact: (text: string) => string): unknown {
  const copy = (item: unknown): unknown => {
    if (typeof item === "string") return redact(item);
    if (item === null || typeof item !== "object") return item;
    return Array.isArray(item) ? new Array(item.length) : {};
  };
  const root = copy(value);
  const work: [unknown, unknown][] = [[value, root]];
  while (work.length > 0) {
    const [source, target] = work.pop()!;
    if (source === null || typeof source !== "object") continue;
    for (const [key, child] of Object.entries(source)) {
      const out = copy(child);
      (target as Record<string, unknown>)[key] = out;
      if (out !== null && typeof out === "object") work.push([child, out]);
    }
  }
  return root;
}

