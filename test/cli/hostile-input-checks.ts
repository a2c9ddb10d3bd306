import assert from "node:assert/strict";

// A tool input nested very deep, and what a headless run must make of it: for
// test/cli/hostile-input.test.ts (openai, in process) and test/e2e/run-hostile-input.test.ts (anthropic, spawned).

export const deepInput = (depth: number) => `{"pattern":${"[".repeat(depth)}${"]".repeat(depth)}}`;

/** The run's stream refused the call as a tool error and went on; the next request left the input out. Returns the session id. */
export function checkDeepInputRefused(stdout: string, requests: { body: unknown }[]): string {
  const lines = stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
  const use = lines.find((l) => l.kind === "tool-use")!;
  const result = lines.find((l) => l.kind === "tool-result")!;
  assert.deepEqual([use.tool_name, use.input], ["grep", "{}"]);
  assert.deepEqual([result.result, result.is_error], ["Invalid input for grep: it nests deeper than 64 levels; the call was not executed.", true]);
  assert.equal(lines.at(-1)!.status, "success");
  // The next request carried the call with an empty input, answered by the error.
  assert.equal(requests.length, 2);
  assert.ok(!JSON.stringify(requests[1]!.body).includes("[[[["), "the deep input is not sent back");
  return use.conversation_id;
}
