import { test } from "node:test";
import assert from "node:assert/strict";
import type { EventDraft, KeenEvent } from "../../protocol/events.js";
import { planUndo } from "../../app/agent/undo.js";

const stamp = (events: EventDraft[]) => events.map((e, i) => ({ ...e, conversation_id: "c", ts: i }) as KeenEvent);
const user: EventDraft = { kind: "user-message", turn_id: "t", message: { role: "user", content: [{ type: "text", text: "go" }] } };
const use = (id: string, name: string, kind?: "edit" | "read" | "exec"): EventDraft => ({
  kind: "tool-use", role: "assistant", tool_name: name, tool_call_id: id, input: "{}", ...(kind ? { tool_kind: kind } : {}),
});
const result = (id: string, name: string, details: Record<string, unknown>): EventDraft => ({
  kind: "tool-result", role: "assistant", tool_name: name, tool_call_id: id, result: "ok", is_error: false, details,
});

test("undo goes by the call's declared kind: an edit's texts are restored, another kind's details never count", () => {
  const plan = planUndo(stamp([
    user,
    use("a", "patch", "edit"), result("a", "patch", { path: "/w/a.ts", old_text: "1", new_text: "2" }),
    use("b", "runner", "exec"), result("b", "runner", { path: "/w/b.ts", old_text: "x", new_text: "y" }),
    use("c", "peek", "read"), result("c", "peek", { path: "/w/c.ts" }),
  ]));
  assert.deepEqual(plan, { steps: [{ path: "/w/a.ts", before: "1", after: "2" }] });
  assert.deepEqual(planUndo(stamp([user, use("a", "patch", "edit"), result("a", "patch", { path: "/w/big.bin" })])), {
    error: "/w/big.bin: the change was too large for Keen to keep its previous contents; undo it with git", refused: true,
  });
});

test("a turn stored before tools declared kinds: a result carrying a file's texts is still undone, a read's path is not a change", () => {
  const plan = planUndo(stamp([
    user,
    use("a", "old_writer"), result("a", "old_writer", { path: "/w/new.ts", old_text: null, new_text: "hi" }),
    use("b", "old_reader"), result("b", "old_reader", { path: "/w/r.ts", total_lines: 3 }),
  ]));
  assert.deepEqual(plan, { steps: [{ path: "/w/new.ts", before: null, after: "hi" }] });
});
