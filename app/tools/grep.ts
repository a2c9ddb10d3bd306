import { spawn } from "node:child_process";
import { accessSync, constants, statSync } from "node:fs";
import { basename, delimiter, dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import * as z from "zod";
import type { FileGuard } from "../permissions/guard.js";
import { defineTool, fail, pathHelpers, toolInput, strArg } from "./define.js";
import { clipLine, MAX_LINE_CHARS, type GrepMatch } from "./search-jobs.js";
import { runInSearchWorker, SEARCH_BUDGET_MS } from "./search-runner.js";
import type { Tool, ToolContext } from "./tool.js";

const DEFAULT_MAX_RESULTS = 200;
// The fallback skips what read_file would refuse anyway, and what is surely not source.
const FALLBACK_MAX_FILE_BYTES = 10 * 1024 * 1024;

/** What both engines take; `root` is an absolute directory or file. */
export interface GrepSearch {
  pattern: string;
  root: string;
  glob?: string;
  caseInsensitive: boolean;
  maxResults: number;
  guard: FileGuard;
  signal: AbortSignal;
  /** The search is stopped this long after it starts (default SEARCH_BUDGET_MS). */
  budgetMs?: number;
}

export type { GrepMatch };

/** Matches in path/line order; `more` when the search stopped at maxResults; `error` for the model. */
export interface GrepOutcome {
  matches: GrepMatch[];
  more: boolean;
  error?: string;
}

/** The model's error when a search ran out of time or the run was interrupted. */
function stoppedError(stopped: "budget" | "abort", budgetMs: number): string {
  if (stopped === "abort") return "The search was interrupted.";
  return `grep stopped after ${budgetMs / 1000}s, its time budget: the pattern may backtrack catastrophically ` +
    "(nested quantifiers such as (a+)+) or the search is too broad. Simplify the pattern or narrow path or glob.";
}

/** The rg executable on PATH, or undefined. */
export function findRipgrep(pathVar = process.env.PATH ?? ""): string | undefined {
  for (const dir of pathVar.split(delimiter).filter(Boolean)) {
    const candidate = join(dir, "rg");
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A filter that drops gitignored files and files the guard refuses (secrets), memoized per path. */
function readableFilter(guard: FileGuard): (path: string) => boolean {
  const seen = new Map<string, boolean>();
  return (path) => {
    let ok = seen.get(path);
    if (ok === undefined) seen.set(path, (ok = !guard.isIgnored(path) && guard.checkRead(path).ok && !protectedLink(guard, path)));
    return ok;
  };
}

/** True for a hard link to a file the guard protects (a credential, Keen's config): its lines must not be searched or shown. */
function protectedLink(guard: FileGuard, path: string): boolean {
  try {
    const st = statSync(path, { bigint: true });
    return st.nlink > 1n && !guard.checkHardLink(path, st).ok;
  } catch {
    return false;
  }
}

const byPathAndLine = (a: GrepMatch, b: GrepMatch) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.line - b.line);

/** Searches with ripgrep (`--json`); hidden files are searched, `.git` is not. */
export function grepWithRipgrep(rg: string, search: GrepSearch, env: NodeJS.ProcessEnv): Promise<GrepOutcome> {
  const args = ["--json", "--no-config", "--hidden", "--glob", "!.git", search.caseInsensitive ? "-i" : "-s"];
  if (search.glob) args.push("--glob", search.glob);
  // rg matches a glob with a slash against paths relative to its cwd, so it runs in the
  // searched directory; the glob then means what it means in the fallback.
  const isFile = statSync(search.root).isFile();
  const cwd = isFile ? dirname(search.root) : search.root;
  args.push("-e", search.pattern, "--", isFile ? basename(search.root) : ".");
  const allowed = readableFilter(search.guard);
  const child = spawn(rg, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
  const matches: GrepMatch[] = [];
  let more = false;
  let stderr = "";
  let stopped: "budget" | "abort" | undefined;
  const stop = () => child.kill("SIGKILL");
  const onAbort = () => {
    stopped ??= "abort";
    stop();
  };
  const budgetMs = search.budgetMs ?? SEARCH_BUDGET_MS;
  const timer = setTimeout(() => {
    stopped ??= "budget";
    stop();
  }, budgetMs);
  if (search.signal.aborted) onAbort();
  search.signal.addEventListener("abort", onAbort, { once: true });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (more) return;
    let event: { type?: string; data?: { path?: { text?: string }; line_number?: number; lines?: { text?: string } } };
    try {
      event = JSON.parse(line);
    } catch {
      return;
    }
    const data = event.data;
    // Non-UTF-8 paths and lines arrive base64 in `bytes`; they are skipped.
    if (event.type !== "match" || !data?.path?.text || data.lines?.text === undefined || !data.line_number) return;
    const path = resolve(cwd, data.path.text);
    if (!allowed(path)) return;
    if (matches.length >= search.maxResults) {
      more = true;
      stop();
      return;
    }
    matches.push({ path, line: data.line_number, text: clipLine(data.lines.text) });
  });
  return new Promise((done) => {
    const settle = (outcome: GrepOutcome) => {
      clearTimeout(timer);
      search.signal.removeEventListener("abort", onAbort);
      done(outcome);
    };
    child.on("error", (err) => settle({ matches, more, error: `Could not run ripgrep: ${err.message}` }));
    child.on("close", (code) => {
      if (stopped) return settle({ matches: [], more: false, error: stoppedError(stopped, budgetMs) });
      // Exit 2 with matches means some paths were unreadable: the matches still stand.
      const error = code === 2 && matches.length === 0 ? `ripgrep failed: ${stderr.trim()}` : undefined;
      settle({ matches: matches.sort(byPathAndLine), more, ...(error ? { error } : {}) });
    });
  });
}

function compile(pattern: string, caseInsensitive: boolean): RegExp | string {
  const flags = caseInsensitive ? "i" : "";
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (err) {
      return `Invalid regex: ${(err as Error).message}`;
    }
  }
}

/**
 * Searches in plain JS, for machines without rg: walks files with tinyglobby (dotfiles
 * included; `.git` and `node_modules` never entered), skipping gitignored, refused and binary files.
 * The walk and the regex run in the search worker (search-runner.ts), stopped at the
 * deadline or on abort, because both match patterns the model chose with backtracking regexes.
 */
export async function grepFallback(search: GrepSearch): Promise<GrepOutcome> {
  const regex = compile(search.pattern, search.caseInsensitive);
  if (typeof regex === "string") return { matches: [], more: false, error: regex };
  const budgetMs = search.budgetMs ?? SEARCH_BUDGET_MS;
  const limits = { deadline: Date.now() + budgetMs, signal: search.signal };
  let files: string[];
  if (statSync(search.root).isFile()) {
    files = [search.root];
  } else {
    // rg semantics: a glob without a slash matches file names at any depth.
    const pattern = search.glob ? (search.glob.includes("/") ? search.glob : `**/${search.glob}`) : "**/*";
    const walked = await runInSearchWorker(
      { type: "glob", pattern, cwd: search.root, dot: true, ignore: ["**/.git/**", "**/node_modules/**"] },
      limits,
    );
    if ("stopped" in walked) return { matches: [], more: false, error: stoppedError(walked.stopped, budgetMs) };
    if ("error" in walked) return { matches: [], more: false, error: walked.error };
    files = walked.value.files.sort();
  }
  const job = {
    type: "grep" as const, files: files.filter(readableFilter(search.guard)), source: regex.source, flags: regex.flags,
    maxResults: search.maxResults, maxFileBytes: FALLBACK_MAX_FILE_BYTES,
  };
  const found = await runInSearchWorker(job, limits);
  if ("stopped" in found) return { matches: [], more: false, error: stoppedError(found.stopped, budgetMs) };
  if ("error" in found) return { matches: [], more: false, error: found.error };
  return found.value;
}

const schema = toolInput("grep", () => z.object({
  pattern: z.string().min(1).describe("Regular expression (ripgrep syntax) to search file contents for."),
  path: z.string().optional().describe("Directory or file to search (default: the working directory)."),
  glob: z.string().optional().describe('Only search files matching this glob, e.g. "*.ts" or "src/**/*.py".'),
  case_insensitive: z.boolean().optional().describe("Match case-insensitively (default false)."),
  max_results: z.number().int().min(1).max(2000).optional().describe(`Maximum matching lines (default ${DEFAULT_MAX_RESULTS}, max 2000).`),
}));

const description = (budgetMs: number) => `Search file contents with a regular expression (ripgrep syntax; escape literal ( ) [ ] { } . * + ?).
Returns matching lines as path:line:text, paths relative to the working directory; lines over ${MAX_LINE_CHARS} characters are shortened.
glob filters file paths relative to path ("*.ts" at any depth, "src/**/*.py" from path). Dotfiles are searched; gitignored files, binary files, .git and secrets are skipped. At most max_results lines (default ${DEFAULT_MAX_RESULTS}).
Each search may take ${budgetMs / 1000}s at most; then it is stopped with an error.`;

/**
 * Options for createGrepTool; `ripgrep: false` forces the JS fallback, a string names the rg binary;
 * `budgetMs` is each call's time budget (default: the context's `searchBudgetMs`, else SEARCH_BUDGET_MS).
 */
export interface GrepToolOptions {
  ripgrep?: string | false;
  budgetMs?: number;
}

/** The `grep` tool: ripgrep when on PATH, else the JS fallback; either is stopped at its budget or on abort. */
export function createGrepTool(ctx: ToolContext, options: GrepToolOptions = {}): Tool {
  const paths = pathHelpers(ctx);
  // PATH is searched at the first call, not while the session is set up: every run builds this tool before its first request.
  let found: { rg: string | undefined } | undefined;
  const ripgrep = () => (found ??= { rg: options.ripgrep === false ? undefined : (options.ripgrep ?? findRipgrep(ctx.env.PATH)) }).rg;
  const budgetMs = options.budgetMs ?? ctx.searchBudgetMs ?? SEARCH_BUDGET_MS;
  return defineTool("grep", description(budgetMs), schema, async (input, call) => {
    const decision = ctx.guard.checkRead(paths.resolve(input.path ?? "."));
    if (!decision.ok) return fail(decision.reason);
    if (!statSync(decision.path, { throwIfNoEntry: false })) return fail(`Path not found: ${paths.show(decision.path)}`);
    const search: GrepSearch = {
      pattern: input.pattern, root: decision.path, caseInsensitive: input.case_insensitive ?? false,
      maxResults: input.max_results ?? DEFAULT_MAX_RESULTS, guard: ctx.guard, signal: call.signal,
      budgetMs, ...(input.glob ? { glob: input.glob } : {}),
    };
    const rg = ripgrep();
    const outcome = rg ? await grepWithRipgrep(rg, search, ctx.env) : await grepFallback(search);
    const details = { pattern: input.pattern, matches: outcome.matches.length, truncated: outcome.more, engine: rg ? "rg" : "js" };
    if (outcome.error) return fail(outcome.error, details);
    if (outcome.matches.length === 0) return { content: "No matches found.", is_error: false, details };
    let content = outcome.matches.map((m) => `${paths.show(m.path)}:${m.line}:${m.text}`).join("\n");
    if (outcome.more) content += `\n\n[Showing the first ${search.maxResults} matches; there are more. Narrow the pattern, path or glob.]`;
    return { content, is_error: false, details };
  }, {
    kind: "search",
    describe: (args) => {
      const path = strArg(args, "path");
      return { title: `Search for ${strArg(args, "pattern") ?? ""}${path ? ` in ${path}` : ""}`, locations: [] };
    },
  });
}
