import { mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after } from "node:test";
import { createFileGuard } from "../../app/permissions/file-guard.js";
import type { ToolCallContext, ToolContext } from "../../app/tools/tool.js";
import { makeTempDir } from "../temp.js";

/** A temp workspace (a git root) and a fake home beside it, removed after the test file. */
export interface TempWorkspace {
  ws: string;
  home: string;
  /** A ToolContext on ws, with its cwd at `cwd` (relative to ws). */
  ctx(cwd?: string, env?: NodeJS.ProcessEnv): ToolContext;
  /** Writes files relative to ws, creating directories. */
  write(files: Record<string, string | Buffer>): void;
}

/** Creates a temp workspace; `git: false` leaves out the `.git` directory. */
export function tempWorkspace(opts: { git?: boolean } = {}): TempWorkspace {
  const base = realpathSync(makeTempDir("keen-tools-"));
  after(() => rmSync(base, { recursive: true, force: true }));
  const ws = join(base, "ws");
  const home = join(base, "home");
  mkdirSync(ws);
  mkdirSync(join(home, ".ssh"), { recursive: true });
  writeFileSync(join(home, ".ssh", "id_rsa"), "PRIVATE KEY\n");
  if (opts.git !== false) mkdirSync(join(ws, ".git"));
  const guard = createFileGuard({ workspace: ws, home });
  return {
    ws,
    home,
    ctx: (cwd = ".", env = { PATH: process.env.PATH ?? "/usr/bin:/bin" }) => ({ cwd: join(ws, cwd), workspace: ws, guard, env }),
    write(files) {
      for (const [rel, content] of Object.entries(files)) {
        mkdirSync(dirname(join(ws, rel)), { recursive: true });
        writeFileSync(join(ws, rel), content);
      }
    },
  };
}

/** A call context that is never aborted. */
export function call(extra: Partial<ToolCallContext> = {}): ToolCallContext {
  return { signal: new AbortController().signal, ...extra };
}
