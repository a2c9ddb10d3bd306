import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RESPONSE_DATA } from "../../protocol/responses.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeSandbox } from "./harness.js";
import { runScript } from "./stdio-client.js";

/*
 * `list-files` (the TUI's `@` completion) over the real `keen stdio`: the
 * engine answers with the session's filesystem guard, so what read_file
 * refuses and what .gitignore hides is never listed.
 */
const MODEL = "anthropic/claude-test";
const server = useMockLLMServer();

test("list-files lists workspace paths, never a secret file, a credential directory, a link to a secret or a gitignored path", async () => {
  const sb = makeSandbox(server.url);
  const ws = sb.workspace;
  for (const dir of ["src/lib", "build", ".ssh", "notes"]) mkdirSync(join(ws, dir), { recursive: true });
  const files: Record<string, string> = {
    "README.md": "hi\n", "src/main.ts": "x\n", "src/lib/util.ts": "x\n", ".env": "TOKEN=1\n", ".env.example": "TOKEN=\n",
    "src/server.key": "k\n", "id_rsa": "k\n", "id_rsa.pub": "p\n", ".ssh/config": "c\n", ".gitignore": "build/\n*.log\nnotes/private.md\n",
    "build/out.js": "x\n", "debug.log": "x\n", "notes/private.md": "x\n", "notes/public.md": "x\n",
  };
  for (const [path, text] of Object.entries(files)) writeFileSync(join(ws, path), text);
  symlinkSync(join(ws, ".env"), join(ws, "env-link"));

  const run = await runScript(sb.run, ["--model", MODEL], [
    { kind: "list-files", id: "all", limit: 1000 },
    { kind: "list-files", id: "src", query: "src/" },
    { kind: "list-files", id: "name", query: "UTIL" },
    { kind: "list-files", id: "two", query: "", limit: 2 },
    { kind: "list-files", id: "bad", limit: 0 },
  ]);
  assert.equal(run.code, 0, run.stderr);
  const all = run.response("all");
  assert.equal(all.ok, true, all.error);
  RESPONSE_DATA["list-files"].parse(all.data);
  assert.deepEqual([...all.data.paths].sort(), [
    ".env.example", ".gitignore", "README.md", "id_rsa.pub", "notes/", "notes/public.md", "src/", "src/lib/", "src/lib/util.ts", "src/main.ts",
  ]);
  assert.equal(all.data.truncated, false);
  // Path prefix first, shorter first; then a file-name match, case-insensitive.
  assert.deepEqual(run.response("src").data, { paths: ["src/", "src/lib/", "src/main.ts", "src/lib/util.ts"], truncated: false });
  assert.deepEqual(run.response("name").data.paths, ["src/lib/util.ts"]);
  assert.deepEqual(run.response("two").data.truncated, true);
  assert.equal(run.response("two").data.paths.length, 2);
  assert.deepEqual([run.response("bad").ok, run.response("bad").error_code], [false, "invalid"]);
});
