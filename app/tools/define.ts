import { homedir } from "node:os";
import { relative, resolve, sep } from "node:path";
import * as z from "zod";
import { lazy } from "../../protocol/lazy.js";
import { realResolve } from "../permissions/file-guard.js";
import type { ToolLocation } from "../../protocol/events.js";
import type { Tool, ToolCallContext, ToolContext, ToolResult } from "./tool.js";

/**
 * A tool's input schema, declared under its tool's name and built on first use: the model's tool list
 * comes from the build's table of JSON Schemas (below), so a run whose model calls no tool never builds
 * one, and never loads zod (protocol/lazy.ts).
 */
export class ToolInput<S extends z.ZodType> {
  readonly get: () => S;
  constructor(readonly name: string, make: () => S) {
    this.get = lazy(make);
  }
}

/** What a declared input parses to. */
export type InputOf<T> = T extends ToolInput<infer S> ? z.output<S> : never;

/**
 * Builds a Tool from a zod schema (declared with `toolInput`, or a plain schema in tests): the JSON
 * Schema the model sees, and parsing that answers invalid input with an error result for the model
 * instead of throwing.
 */
export function defineTool<S extends z.ZodType>(
  name: string,
  description: string,
  input: ToolInput<S> | S,
  run: (input: z.output<S>, call: ToolCallContext) => Promise<ToolResult>,
  about: Pick<Tool, "kind" | "mutates" | "sandboxed" | "shell" | "concurrent" | "jobControl" | "warm" | "describe"> = {},
): Tool {
  const schema = input instanceof ToolInput ? input.get : () => input;
  return {
    definition: { name, description, inputSchema: input instanceof ToolInput ? inputJsonSchema(input) : convert(input) },
    ...about,
    async run(raw, call) {
      const parsed = schema().safeParse(raw);
      if (!parsed.success) return fail(`Invalid input for ${name}:\n${z.prettifyError(parsed.error)}`);
      return run(parsed.data, call);
    },
  };
}

/**
 * The JSON Schema of every declared tool input, computed at build time from these same zod
 * schemas (scripts/tool-schemas.mjs; esbuild puts the table in the bundle), so a run sends the
 * model the tool list without building or converting a schema. Running from source there is none:
 * converted on first use. test/build/tool-schemas.test.ts checks the table against zod, byte for byte.
 */
declare const __KEEN_TOOL_SCHEMAS__: string | undefined;
// A JSON string, parsed here: esbuild makes an object-valued define a module that every module of the bundle initialises.
const built: Record<string, Record<string, unknown>> | undefined = typeof __KEEN_TOOL_SCHEMAS__ === "string" ? JSON.parse(__KEEN_TOOL_SCHEMAS__) : undefined;

/** Every declared tool input by its tool's name, with its JSON Schema once known. */
const inputs = new Map<string, { input: ToolInput<z.ZodType>; json?: Record<string, unknown> }>();

/** Declares a tool's input schema (at module level, built by `make` on first use) under its tool's name: `warmToolSchemas` and the build know it. */
export function toolInput<S extends z.ZodType>(name: string, make: () => S): ToolInput<S> {
  // The build's table is keyed by this name: two inputs under one would share a schema.
  if (inputs.has(name)) throw new Error(`tool input "${name}" is declared twice`);
  const input = new ToolInput(name, make);
  inputs.set(name, { input });
  return input;
}

/** The JSON Schema the model sees: the build's, else converted once. Callers must not mutate it. */
function inputJsonSchema(input: ToolInput<z.ZodType>): Record<string, unknown> {
  const entry = inputs.get(input.name);
  if (entry?.json) return entry.json;
  const json = built?.[input.name] ?? convert(input.get());
  if (entry?.input === input) entry.json = json;
  return json;
}

function convert(schema: z.ZodType): Record<string, unknown> {
  const json = z.toJSONSchema(schema) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** Every declared input's JSON Schema, converted by zod now (never the build's), by tool name: what the build bakes in. */
export function convertToolSchemas(): Record<string, Record<string, unknown>> {
  return Object.fromEntries([...inputs].map(([name, { input }]) => [name, convert(input.get())]));
}

/**
 * Builds and converts every declared input schema and runs zod's first parse of each (which
 * compiles its fast path). The start-up snapshot build calls this (app/cli/warm.ts), so a run
 * starts with the results instead of computing them, and the code cache's warm-up, so that a
 * run's first tool call finds zod's functions compiled.
 */
export function warmToolSchemas(): void {
  for (const { input } of inputs.values()) {
    inputJsonSchema(input);
    input.get().safeParse({});
  }
}

/** An error result for the model. */
export function fail(content: string, details?: Record<string, unknown>): ToolResult {
  return details ? { content, is_error: true, details } : { content, is_error: true };
}

/** Path helpers bound to a session: resolve input against cwd, show results relative to it. */
export interface PathHelpers {
  resolve(input: string): string;
  /** Relative to cwd when inside it (`.` for cwd itself), else absolute. */
  show(abs: string): string;
}

/** Path helpers for ctx; `show` also understands cwd's real path, since the guard returns real paths. */
export function pathHelpers(ctx: ToolContext): PathHelpers {
  const bases = [...new Set([resolve(ctx.cwd), realResolve(resolve(ctx.cwd))])];
  return {
    // Models write `~/…` for the home directory, as in a shell; never a directory named `~`.
    resolve: (input) => resolve(ctx.cwd, input === "~" || input.startsWith("~/") ? homedir() + input.slice(1) : input),
    show(abs) {
      for (const base of bases) {
        if (abs === base) return ".";
        if (abs.startsWith(base.endsWith(sep) ? base : base + sep)) return relative(base, abs);
      }
      return abs;
    },
  };
}

/** "1 line", "3 lines". */
export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/** Lines in a text the way editors count them: a final newline does not start another line. */
export function countLines(text: string): number {
  if (text === "") return 0;
  const newlines = text.split("\n").length - 1;
  return text.endsWith("\n") ? newlines : newlines + 1;
}

/** A string argument of a call, for `describe` (the input is not validated there). */
export function strArg(args: Record<string, unknown>, key: string): string | undefined {
  return typeof args[key] === "string" ? (args[key] as string) : undefined;
}

/** The location of a call's path argument, absolute; none without one. */
export function locationOf(paths: PathHelpers, path: string | undefined, line?: unknown): ToolLocation[] {
  return path ? [{ path: paths.resolve(path), ...(typeof line === "number" ? { line } : {}) }] : [];
}
