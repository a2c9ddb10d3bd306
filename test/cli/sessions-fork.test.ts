import { test } from "node:test";
import assert from "node:assert/strict";
import { openStore } from "../../storage/level-store.js";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// `keen sessions fork` and how `keen sessions list` shows a fork, decided in this process
// (test/cli/in-process.ts). test/e2e/rewind.test.ts forks over a real `keen stdio` and reads the
// stored parent; these three commands cost it ~1.5 s of CPU as spawned Keens.

const server = useMockLLMServer();

test("sessions fork prints the new id (--at 1: an empty history), --at past the end is a usage error, and sessions list names a fork's parent and prompt", async () => {
  const sb = makeInProcessSandbox(server);
  server.enqueue({ text: "a1" }, { text: "a2" }, { text: "a3" });
  const original = (await sb.runJson(["first"])).session_id as string;
  await sb.runJson(["--session", original, "second"]);
  await sb.runJson(["--session", original, "third"]);

  const cli = await sb.keen(["sessions", "fork", original, "--at", "1"]);
  assert.equal(cli.code, 0, cli.stderr);
  const id = cli.stdout.trim();
  assert.equal(cli.stdout, `${id}\n`, "the new id alone on stdout");
  assert.equal(cli.stderr, `keen: forked ${original} before prompt 1 ("first")\n`, "what was done goes to stderr");
  const store = openStore(sb.home);
  const fork = await store.resolve(id);
  assert.deepEqual(JSON.parse(JSON.stringify(fork.parent)), { id: original, at: 1 });
  const events = await store.load(fork.id);
  assert.deepEqual(events.filter((e) => e.kind === "user-message" || e.kind === "text"), [], "forked before the first prompt: an empty history");

  const bad = await sb.keen(["sessions", "fork", original, "--at", "9"]);
  assert.deepEqual([bad.code, bad.stdout], [2, ""]);
  assert.match(bad.stderr, /^keen: no prompt 9: the session has 3/);
  assert.equal(bad.stderr.trim().split("\n").length, 1, bad.stderr);

  const atTwo = await sb.keen(["sessions", "fork", original, "--at", "2"]);
  assert.equal(atTwo.code, 0, atTwo.stderr);
  const listed = await sb.keen(["sessions", "list"]);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /\(fork of \S+@2\) first/);
  assert.equal((await sb.sessions()).length, 3, "the original and two forks");
});
