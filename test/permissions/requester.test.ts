import assert from "node:assert/strict";
import { test } from "node:test";
import { gate, stricterMode, toolClass } from "../../app/permissions/policy.js";

test("the decision table: reads run, each mode gates edits and bash as documented", () => {
  const table = (["auto", "accept-edits", "ask", "read-only"] as const).map((mode) =>
    [mode, gate(mode, "read_file"), gate(mode, "edit_file"), gate(mode, "write_file"), gate(mode, "bash"), gate(mode, "mcp__x")]);
  assert.deepEqual(table, [
    ["auto", "allow", "allow", "allow", "allow", "allow"],
    ["accept-edits", "allow", "allow", "allow", "ask", "ask"],
    ["ask", "allow", "ask", "ask", "ask", "ask"],
    ["read-only", "allow", "refuse", "refuse", "refuse", "refuse"],
  ]);
  assert.equal(toolClass("structured_output"), "read");
});

test("standing rules replace asking; read-only is never widened and deny always wins", () => {
  assert.equal(gate("ask", "bash", "allow"), "allow");
  assert.equal(gate("ask", "bash", "deny"), "refuse");
  assert.equal(gate("auto", "bash", "deny"), "refuse");
  assert.equal(gate("read-only", "bash", "allow"), "refuse");
  assert.equal(gate("ask", "read_file", "deny"), "allow");
});

test("modes order by trust", () => {
  assert.equal(stricterMode("auto", "ask"), "ask");
  assert.equal(stricterMode("read-only", "accept-edits"), "read-only");
});
