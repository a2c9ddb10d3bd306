import assert from "node:assert/strict";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { createFileGuard } from "../../app/permissions/file-guard.js";
import { createFileLister } from "../../app/tools/file-list.js";
import { tempWorkspace } from "./helpers.js";

/* The `list-files` walk (the TUI's `@` completion): the guard's own rules decide, gitignore included. */

const t = tempWorkspace();
t.write({
  ".gitignore": "build/\n", "src/a.ts": "", "src/secrets.env/db.txt": "", "keen-data/state.json": "", "private.txt": "",
  "sub/.gitignore": "*.tmp\n", "sub/x.tmp": "", "sub/y.ts": "", "build/out.js": "", ".git/config": "",
});
symlinkSync(join(t.home, ".ssh", "id_rsa"), join(t.ws, "key-link"));

test("what the guard refuses to read is not listed: secret directories, Keen's own data, the deny list, links to secrets; nested .gitignore counts", async () => {
  const guard = createFileGuard({ workspace: t.ws, home: t.home, protectedPaths: [join(t.ws, "keen-data")], extraDenied: [join(t.ws, "private.txt")] });
  const listed = await createFileLister(guard, t.ws).list("", 100);
  assert.deepEqual([...listed.paths].sort(), [".gitignore", "src/", "src/a.ts", "sub/", "sub/.gitignore", "sub/y.ts"]);
});

test("paths are relative to the session's directory; within the walk's lifetime a new file waits for the next walk", async () => {
  const clock = 0;
  const lister = createFileLister(createFileGuard({ workspace: t.ws, home: t.home }), join(t.ws, "src"), () => clock);
  assert.deepEqual(await lister.list("", 10), { paths: ["a.ts"], truncated: false });
  t.write({ "src/b.ts": "" });
  assert.deepEqual((await lister.list("", 10)).paths, ["a.ts"], "the walk is reused");
  const fresh = createFileLister(createFileGuard({ workspace: t.ws, home: t.home }), join(t.ws, "src"), () => clock);
  assert.deepEqual((await fresh.list("", 10)).paths, ["a.ts", "b.ts"]);
  assert.deepEqual(await fresh.list("", 1), { paths: ["a.ts"], truncated: true });
});
