/**
 * Rewind and fork of a CLI-backed session (docs/sessions.md, "CLI runner"): the CLI's own session still holds
 * the rewound turns, so the next turn starts a new CLI session whose prompt carries Keen's rewound conversation;
 * a fork's first turn does the same instead of continuing the parent's CLI session.
 */
import { test } from "node:test";
import assert from "node:assert/strict";
import { startStdio } from "./stdio-client.js";
import { sandbox } from "./cli-runner-sandbox.js";

test("CLI runner: after a rewind, and in a fork, a new CLI session carries the rewound transcript", async () => {
  const box = sandbox("text-thinking");
  const client = startStdio(["--runner", "cli", "--model", "anthropic/claude-sonnet-4-5"], box.env, box.workspace, 60_000);
  const prompt = async (id: string, text: string) => {
    client.send({ kind: "prompt", id, text });
    const answer = await client.response(id);
    assert.equal(answer.ok, true, answer.error);
    return answer.data.session_id as string;
  };
  const session = await prompt("p1", "first");
  await prompt("p2", "second");
  client.send({ kind: "rewind", id: "r", to: 2 });
  assert.equal((await client.response("r")).data.text, "second");
  await prompt("p3", "second, again");
  client.send({ kind: "fork-session", id: "f", session, at: 2 });
  assert.equal((await client.response("f")).ok, true);
  await prompt("p4", "in the fork");
  assert.equal((await client.end()).code, 0);

  const [one, two, three, four] = box.runs();
  assert.deepEqual(two!.argv.slice(7, 9), ["--resume", one!.argv[8]], "before the rewind, the CLI session goes on");
  const transcript = (prompt: string) =>
    `The conversation so far (it ran in ${box.workspace}):\n\nUser: first\n\nAssistant: Hello! How can I help you today?\n\n---\n\n${prompt}`;
  assert.equal(three!.argv[7], "--session-id");
  assert.ok(![one!.argv[8], two!.argv[8]].includes(three!.argv[8]), "a new CLI session after the rewind");
  assert.equal(three!.stdin, transcript("second, again"));
  assert.equal(four!.argv[7], "--session-id");
  assert.notEqual(four!.argv[8], three!.argv[8]);
  assert.equal(four!.stdin, transcript("in the fork"));
});
