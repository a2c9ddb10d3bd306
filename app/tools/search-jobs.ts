import { statSync } from "node:fs";
import { readFile } from "node:fs/promises";

/*
 * The work of `glob` and of grep's JS engine that runs a pattern the model
 * chose: tinyglobby matches names with regular expressions made from the glob,
 * grep tests every line with the model's regex, and either can backtrack for
 * hours on a crafted pattern and a long name or line. So these run in a worker
 * thread (search-worker.ts), where search-runner.ts can stop them; this module
 * is what the worker executes, kept free of anything else Keen loads.
 */

/** Walk a directory and match names with a glob (tinyglobby). */
export interface GlobJob {
  type: "glob";
  pattern: string;
  cwd: string;
  dot: boolean;
  ignore: string[];
}

/** Test every line of `files` with a regex. */
export interface GrepJob {
  type: "grep";
  files: string[];
  /** Source and flags of a RegExp the caller already compiled once, so it is valid. */
  source: string;
  flags: string;
  maxResults: number;
  maxFileBytes: number;
}

/** A job for the search worker. */
export type SearchJob = GlobJob | GrepJob;

/** One matching line; `path` is absolute. */
export interface GrepMatch {
  path: string;
  line: number;
  text: string;
}

/** What each job gives back. */
export interface SearchJobResult {
  glob: { files: string[] };
  grep: { matches: GrepMatch[]; more: boolean };
}

/** Longest line grep returns; longer ones are cut with "...". */
export const MAX_LINE_CHARS = 300;

/** A matched line without its line break, at most MAX_LINE_CHARS. */
export function clipLine(text: string): string {
  const line = text.replace(/\r?\n?$/, "");
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}...` : line;
}

/** Runs one job; may throw (the worker reports the message). */
export async function runSearchJob(job: SearchJob): Promise<SearchJobResult[SearchJob["type"]]> {
  return job.type === "glob" ? globFiles(job) : grepFiles(job);
}

async function globFiles(job: GlobJob): Promise<SearchJobResult["glob"]> {
  // Loaded on first use: tinyglobby (with fdir and picomatch) costs ~15 ms.
  const { glob } = await import("tinyglobby");
  const files = await glob(job.pattern, { cwd: job.cwd, absolute: true, dot: job.dot, followSymbolicLinks: false, ignore: job.ignore });
  return { files };
}

async function grepFiles(job: GrepJob): Promise<SearchJobResult["grep"]> {
  const regex = new RegExp(job.source, job.flags);
  const matches: GrepMatch[] = [];
  for (const file of job.files) {
    const stat = statSync(file, { throwIfNoEntry: false });
    if (!stat?.isFile() || stat.size > job.maxFileBytes) continue;
    const buf = await readFile(file).catch(() => undefined);
    if (!buf || buf.subarray(0, 8192).includes(0)) continue;
    const lines = buf.toString("utf8").split("\n");
    for (let i = 0; i < lines.length; i++) {
      if (!regex.test(lines[i]!)) continue;
      if (matches.length >= job.maxResults) return { matches, more: true };
      matches.push({ path: file, line: i + 1, text: clipLine(lines[i]!) });
    }
  }
  return { matches, more: false };
}
