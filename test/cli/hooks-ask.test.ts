import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { askHooksTrustOnce } from "../../app/cli/hooks-ask.js";
import { loadConfig } from "../../app/cli/config.js";
import { collectHooks } from "../../app/extensions/hooks-config.js";
import { makeTempDir } from "../temp.js";

/** The TUI's one question about a workspace's project hooks, answered on a fake terminal. */
async function ask(home: string, ws: string, answer: string) {
  const paths = { configFile: join(home, "config.json"), dataDir: home };
  const input = new PassThrough();
  const output = new PassThrough();
  let shown = "";
  output.on("data", (d) => (shown += d));
  const asking = askHooksTrustOnce(paths, loadConfig(paths, ws), ws, input, output);
  if (answer) setImmediate(() => input.end(`${answer}\n`));
  const asked = await asking;
  return { asked, shown, config: loadConfig(paths, ws), paths };
}

test("the TUI asks once about untrusted project hooks: no is remembered for this content, yes trusts it, a change asks again", async () => {
  const home = makeTempDir("keen-hooks-ask-home-");
  const ws = makeTempDir("keen-hooks-ask-ws-");
  mkdirSync(join(ws, ".keen"));
  const settings = (command: string) => writeFileSync(join(ws, ".keen", "config.json"), JSON.stringify({ hooks: { Stop: [{ hooks: [{ type: "command", command }] }] } }));
  settings("make check");

  const no = await ask(home, ws, "n");
  assert.equal(no.asked, true);
  assert.match(no.shown, /this workspace configures hooks .*\n {2}Stop: make check {2}\(\.keen\/config\.json\)\nRun them\? Any change to them asks again\. \[y\/N\]/);
  assert.equal(collectHooks({ userFile: no.paths.configFile, project: no.config.projectHooks, workspace: ws, trust: no.config.hooksTrust }).hooks.length, 0);
  assert.equal((await ask(home, ws, "")).asked, false, "declined is not asked again");

  settings("make check && make lint");
  const yes = await ask(home, ws, "y");
  assert.equal(yes.asked, true);
  const trusted = collectHooks({ userFile: yes.paths.configFile, project: yes.config.projectHooks, workspace: ws, trust: yes.config.hooksTrust });
  assert.deepEqual(trusted.hooks.map((h) => h.command), ["make check && make lint"]);
  assert.ok(JSON.parse(readFileSync(yes.paths.configFile, "utf8")).hooksTrust[ws].sha256);
  assert.equal((await ask(home, ws, "")).asked, false);
});
