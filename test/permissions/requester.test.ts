import assert from "node:assert/strict";
import { test } from "node:test";
import { gate, stricterMode } from "../../app/permissions/policy.js";

test("the decision table by kind: reads and searches run, each mode gates edits, commands and the rest as documented", () => {
  const kinds = ["read", "search", "edit", "exec", "network", "other", undefined] as const;
  const table = (["auto", "accept-edits", "ask", "read-only"] as const).map((mode) => [mode, ...kinds.map((kind) => gate(mode, undefined, { kind }))]);
  assert.deepEqual(table, [
    ["auto", "allow", "allow", "allow", "allow", "allow", "allow", "allow"],
    ["accept-edits", "allow", "allow", "allow", "ask", "ask", "ask", "ask"],
    ["ask", "allow", "allow", "ask", "ask", "ask", "ask", "ask"],
    ["read-only", "allow", "allow", "refuse", "refuse", "refuse", "refuse", "refuse"],
  ]);
  // A tool's own word on mutating wins over its kind.
  assert.equal(gate("read-only", undefined, { kind: "other", mutates: false }), "allow");
  assert.equal(gate("ask", undefined, { kind: "read", mutates: true }), "ask");
});

test("standing rules replace asking; read-only is never widened and deny always wins", () => {
  assert.equal(gate("ask", "allow", { kind: "exec" }), "allow");
  assert.equal(gate("ask", "deny", { kind: "exec" }), "refuse");
  assert.equal(gate("auto", "deny", { kind: "exec" }), "refuse");
  assert.equal(gate("read-only", "allow", { kind: "exec" }), "refuse");
  assert.equal(gate("ask", "deny", { kind: "read" }), "allow");
});

test("modes order by trust", () => {
  assert.equal(stricterMode("auto", "ask"), "ask");
  assert.equal(stricterMode("read-only", "accept-edits"), "read-only");
});
