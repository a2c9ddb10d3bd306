import { parse } from "yaml";

/*
 * Markdown files with an optional YAML frontmatter block (`---` lines), as
 * custom commands and skills are written (the format Claude Code uses, so
 * existing files work). Parsed with the `yaml` package: hand-parsing YAML
 * gets quoting, lists and multi-line values wrong.
 */

/** The frontmatter's fields (empty when there is none) and the body after it. */
export interface Frontmatter {
  data: Record<string, unknown>;
  body: string;
  /** Set when the block was there but not valid YAML (the body is then the whole file). */
  error?: string;
}

const BLOCK = /^---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

export function parseFrontmatter(text: string): Frontmatter {
  const source = text.replace(/^\uFEFF/, "");
  const m = BLOCK.exec(source);
  if (!m) return { data: {}, body: source };
  try {
    const data: unknown = parse(m[1]!);
    if (data === null || data === undefined) return { data: {}, body: source.slice(m[0].length) };
    if (typeof data !== "object" || Array.isArray(data)) return { data: {}, body: source, error: "frontmatter is not a mapping" };
    return { data: data as Record<string, unknown>, body: source.slice(m[0].length) };
  } catch (error) {
    return { data: {}, body: source, error: `frontmatter is not valid YAML: ${(error as Error).message.split("\n")[0]}` };
  }
}

/** A string field, or undefined when absent or not a string. */
export function stringField(data: Record<string, unknown>, key: string): string | undefined {
  const value = data[key];
  return typeof value === "string" && value.trim() ? value.trim() : undefined;
}

/** A list field given as a YAML list or a comma-separated string (`allowed-tools: read_file, grep`). */
export function listField(data: Record<string, unknown>, key: string): string[] | undefined {
  const value = data[key];
  if (Array.isArray(value)) return value.map(String).map((s) => s.trim()).filter(Boolean);
  // Commas outside parentheses separate (`Bash(git add:*), Read`); without commas, spaces do.
  if (typeof value === "string") {
    const parts = value.includes(",") ? value.split(/,(?![^(]*\))/) : value.split(/\s+(?![^(]*\))/);
    return parts.map((s) => s.trim()).filter(Boolean);
  }
  return undefined;
}
