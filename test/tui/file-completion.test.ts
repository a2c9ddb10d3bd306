import { test } from "node:test";
import assert from "node:assert/strict";
import type { Command } from "../../protocol/commands.js";
import { TuiController } from "../../app/tui/controller.js";
import { acceptCompletion, updateCompletion } from "../../app/tui/slash-run.js";
import { loadTheme } from "../../themes/index.js";
import { FakeEngine } from "../fakes/fake-engine.js";
import { TuiHarness } from "./harness.js";

/*
 * `@` completion asks the engine (`list-files`, answered with the session's
 * filesystem guard: test/e2e/stdio-list-files.test.ts) and shows its answer
 * only while the word at the cursor is still the one it asked about.
 */

function controller() {
  const engine = new FakeEngine();
  const c = new TuiController({
    client: engine, theme: loadTheme("dark", {}), initial: { cwd: "/work/proj", model: "m/x", permissionMode: "ask" },
    requestFrame: () => {}, redraw: () => {}, exit: () => {},
  });
  engine.subscribe((event) => c.onEvent(event));
  return { engine, c };
}

/** The completion values on show (read through a call: an assertion above must not narrow it). */
const shown = (c: TuiController) => c.ui.completion?.values;

/** Lets the fake engine's answers (queued microtasks) arrive. */
const answered = () => new Promise<void>((resolve) => setImmediate(resolve));

const paths = (command: Command) => {
  const query = command.kind === "list-files" ? command.query : "";
  return { ok: true as const, data: { paths: ["src/", "src/app.ts", "src/apple.ts"].filter((p) => p.includes(query ?? "")), truncated: false } };
};

test("@ asks the engine with the word's query and a limit; the answer becomes the list, and Tab puts the path in", async () => {
  const { engine, c } = controller();
  engine.answers["list-files"] = paths;
  c.editor.insert("look at @app");
  updateCompletion(c);
  assert.deepEqual(engine.commands("list-files").map((x) => [x.query, x.limit]), [["app", 50]]);
  assert.equal(c.ui.completion, undefined, "nothing shows before the answer");
  await answered();
  assert.deepEqual(shown(c), ["@src/app.ts", "@src/apple.ts"]);
  acceptCompletion(c);
  assert.equal(c.editor.text, "look at @src/app.ts ");
});

test("an answer for a word the user has typed past is dropped; the newest one shows", async () => {
  const { engine, c } = controller();
  engine.answers["list-files"] = paths;
  c.editor.insert("@ap");
  updateCompletion(c);
  c.editor.insert("pl");
  updateCompletion(c);
  await answered();
  assert.deepEqual(engine.commands("list-files").map((x) => x.query), ["ap", "appl"]);
  assert.deepEqual(c.ui.completion?.values, ["@src/apple.ts"]);
});

test("a directory accepted asks again below it; a refused list-files shows no list and no error line", async () => {
  const { engine, c } = controller();
  engine.answers["list-files"] = paths;
  c.editor.insert("@sr");
  updateCompletion(c);
  await answered();
  assert.equal(c.ui.completion?.values[0], "@src/");
  acceptCompletion(c);
  assert.equal(c.editor.text, "@src/");
  assert.deepEqual(engine.commands("list-files").at(-1)!.query, "src/");
  engine.answers["list-files"] = { ok: false, error: "no provider", error_code: "failed" };
  c.editor.insert("x");
  updateCompletion(c);
  await answered();
  assert.equal(c.ui.completion, undefined);
  assert.ok(!c.view.items.some((item) => item.type === "notice"), "no error line for a completion");
});

test("on a whole screen, a path wider than the list is cut at its start: the file name and what tells two paths apart stay in sight", async () => {
  const dir = "src/a-deeply-nested-directory-with-a-long-name/and-another-one-that-keeps-going";
  const h = new TuiHarness(120, 30).start();
  h.engine.answers["list-files"] = { ok: true, data: { paths: [`${dir}/`, `${dir}/first-file-with-its-own-long-name.ts`, `${dir}/second-file.ts`], truncated: false } };
  await h.waitFor("Type a prompt");
  await h.keys("look at @src/a-deep");
  await h.waitFor("second-file.ts");
  const rows = h.screen().filter((row) => row.includes("…"));
  assert.equal(rows.length, 3, h.text());
  for (const [row, end] of rows.map((row, i) => [row, ["keeps-going/", "first-file-with-its-own-long-name.ts", "second-file.ts"][i]!])) {
    assert.match(row, new RegExp(`^│…\\S*${end.replace(/\./g, "\\.")} *│`), h.text());
  }
  await h.keys("\x1b");
  await h.stop();
});
