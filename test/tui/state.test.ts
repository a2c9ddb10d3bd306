import { test } from "node:test";
import assert from "node:assert/strict";
import { draft as d } from "../fakes/fake-engine.js";
import { reduce } from "../../app/tui/state.js";
import { stamp, viewOf } from "./helpers.js";

const brief = (view: ReturnType<typeof viewOf>) =>
  view.items.map((i) => (i.type === "tool" ? `tool:${view.tools.get(i.callId)!.status}` : i.type === "notice" ? `notice:${i.level}:${i.text}` : i.type === "user" ? `user:${i.state}:${i.text}` : i.type === "plan" ? `plan:${i.entries.length}` : `${i.type}:${i.discarded ? "discarded" : i.live ? "live" : "done"}:${i.text}`));

test("a streamed turn: deltas build a live block that the complete text settles, never a duplicate", () => {
  const view = viewOf([
    d.sessionStart(), { kind: "local-prompt", text: "hi" }, d.user("hi"),
    d.thinkingStart(), d.thinkingDelta("let me "), d.thinkingDelta("think"), d.thinkingEnd(),
    d.delta("Hel"), d.delta("lo"), d.contentEnd(), d.thinking("let me think"), d.text("Hello"), d.memory("secret notes"),
  ]);
  assert.deepEqual(brief(view), ["user:sent:hi", "thinking:done:let me think", "assistant:done:Hello"]);
  assert.equal(view.running, true);
  reduce(view, stamp(d.result()));
  assert.equal(view.running, false);
  assert.equal(view.lastAnswer, "Hello");
  assert.equal(view.usage.total_tokens, 1280);
  assert.deepEqual(view.context, { used: 1280, window: 200000 });
});

test("memory is never shown", () => {
  const view = viewOf([d.user("q"), d.text("a"), d.memory("- README.md: notes")]);
  assert.ok(!JSON.stringify(view.items).includes("README.md: notes"));
});

test("a retry keeps the failed attempt's partial text on screen, marked discarded, ignores its late deltas, and counts down", () => {
  const view = viewOf([d.user("q"), d.delta("partial ans"), d.retry(2, 3000), d.delta("late leftover", 1), d.delta("fresh", 2), d.contentEnd(2), d.text("fresh")]);
  assert.deepEqual(brief(view), ["user:sent:q", "assistant:discarded:partial ans", "assistant:done:fresh"]);
  const v2 = viewOf([d.user("q"), d.delta("partial"), d.retry(2, 3000)]);
  assert.ok(v2.retry && v2.retry.until - 3000 > 0);
  assert.deepEqual(brief(v2), ["user:sent:q", "assistant:discarded:partial"]);
});

test("a failed turn says that /retry sends the prompt again", () => {
  const view = viewOf([{ kind: "local-prompt", text: "q" }, d.user("q"), d.result({ status: "error", is_error: true, errors: ["503 overloaded"] })]);
  assert.deepEqual(brief(view).slice(-2), ["notice:error:503 overloaded", "notice:info:/retry sends the last prompt again."]);
  assert.equal(view.lastPrompt, "q");
});

test("replayed history goes through the same reducer and gives the same transcript as live", () => {
  const events = [d.user("fix it"), d.thinking("plan"), d.toolUse("t1", "bash", { command: "ls" }), d.toolResult("t1", "bash", "a\nb"), d.text("Done.")];
  const replayed = viewOf(events, { replay: true } as never);
  assert.deepEqual(brief(replayed), ["user:sent:fix it", "thinking:done:plan", "tool:ok", "assistant:done:Done."]);
  assert.equal(replayed.tools.get("t1")!.output, "a\nb");
});

test("tool lifecycle: pending, waiting for approval with a pending diff, running, done with the applied diff", () => {
  const view = viewOf([d.user("edit"), d.toolUse("t1", "edit_file", { path: "a.ts" }), d.permission("r1", "t1", "edit_file", { path: "a.ts" }, "-a\n+b", "a.ts")]);
  assert.equal(view.tools.get("t1")!.status, "waiting");
  assert.equal(view.permissions.length, 1);
  assert.deepEqual(view.diffs.map((x) => x.pending), [true]);
  reduce(view, stamp(d.toolStart("t1", "edit_file")));
  assert.equal(view.permissions.length, 0);
  assert.equal(view.tools.get("t1")!.status, "running");
  reduce(view, stamp(d.toolUpdate("t1", "edit_file", "progress")));
  assert.equal(view.tools.get("t1")!.output, "progress");
  reduce(view, stamp(d.toolResult("t1", "edit_file", "Edited a.ts", false, { path: "/w/a.ts", diff: "--- a\n+++ b\n-a\n+b" })));
  assert.deepEqual(view.diffs, [{ callId: "t1", path: "/w/a.ts", diff: "--- a\n+++ b\n-a\n+b", pending: false, turn: view.items[0]!.id }]);
  const t = view.tools.get("t1")!;
  assert.equal(t.status, "ok");
  assert.ok(t.endedAt! > t.startedAt!);
});

test("a denied edit drops its pending diff", () => {
  const view = viewOf([d.toolUse("t1", "edit_file", {}), d.permission("r1", "t1", "edit_file", {}, "-a\n+b", "a.ts"), d.toolResult("t1", "edit_file", "The user denied this", true)]);
  assert.deepEqual(view.diffs, []);
  assert.equal(view.tools.get("t1")!.status, "error");
});

test("the reducer keeps prompts out of the transcript until they are sent; deltas after a turn's first block stay in that answer", () => {
  const view = viewOf([{ kind: "local-prompt", text: "one" }, d.user("one"), d.delta("first "), d.delta("answer"), d.contentEnd(), d.text("first answer"), d.result()]);
  assert.deepEqual(brief(view).filter((s) => !s.startsWith("notice")), ["user:sent:one", "assistant:done:first answer"]);
  assert.equal(view.running, false, "the controller, not the reducer, starts what was queued");
  reduce(view, { kind: "local-prompt", text: "two" });
  reduce(view, stamp(d.result({ status: "interrupted" })));
  assert.deepEqual(brief(view).slice(-2), ["user:sent:two", "notice:warning:Interrupted."]);
  assert.equal(view.running, false);
});

test("the step limit asks whether to continue; an interrupted turn cancels running tools", () => {
  const view = viewOf([d.user("go"), d.toolUse("t1", "bash", { command: "sleep 9" }), d.toolStart("t1", "bash"), d.result({ status: "max_turns" })]);
  assert.equal(view.askContinue, true);
  assert.equal(view.tools.get("t1")!.status, "cancelled");
});

test("errors show once: an error event, not again from the result's errors", () => {
  const view = viewOf([d.user("q"), d.error("401 invalid key"), d.result({ status: "error", is_error: true, errors: ["401 invalid key"] })]);
  assert.deepEqual(brief(view), ["user:sent:q", "notice:error:401 invalid key"]);
  const v2 = viewOf([d.user("q"), d.result({ status: "error", is_error: true, errors: ["boom"] })]);
  assert.deepEqual(brief(v2).slice(-1), ["notice:error:boom"]);
});

test("session-start sets id, model, cwd and mode; a failed command shows as an error", () => {
  const view = viewOf([d.sessionStart({ permission_mode: "auto", model: "openai/x" }), { kind: "response", command: "set-model", ok: false, error: "unknown model" } as never]);
  assert.equal(view.permissionMode, "auto");
  assert.equal(view.model, "openai/x");
  assert.equal(view.sessionId, "0199aaaa-bbbb-7ccc-8ddd-eeeeeeeeeeee");
  assert.deepEqual(brief(view), ["notice:error:set-model: unknown model"]);
});

test("changed items are replaced, unchanged ones keep their identity (the render cache relies on it)", () => {
  const view = viewOf([d.user("q"), d.delta("a")]);
  const [user, text] = view.items;
  reduce(view, stamp(d.delta("b")));
  assert.equal(view.items[0], user);
  assert.notEqual(view.items[1], text);
  assert.equal(view.items[1]!.type === "assistant" && view.items[1].text, "ab");
});

test("a compaction's end shows what it did, or that it failed and changed nothing", () => {
  const compaction = (extra: Record<string, unknown>) => ({ kind: "compaction", phase: "end", trigger: "manual", tokens_before: 9000, ...extra }) as never;
  const view = viewOf([d.user("q"), d.text("a"), { kind: "compaction", phase: "start", trigger: "manual", tokens_before: 9000 } as never, compaction({ tokens_after: 1200 }), compaction({ error: "provider down" })]);
  const notices = view.items.flatMap((i) => (i.type === "notice" ? [[i.level, i.text]] : []));
  assert.deepEqual(notices, [
    ["info", "compacted (manual): about 9000 → 1200 tokens"],
    ["error", "compaction (manual) failed: provider down; the session is unchanged"],
  ]);
});

test("a tool stopped by an interrupt reads as interrupted, not failed", () => {
  const view = viewOf([d.user("q"), d.toolUse("t1", "bash", { command: "sleep 9" }), d.toolStart("t1", "bash"), { ...d.toolResult("t1", "bash", "[aborted]", true), interrupted: true } as never]);
  assert.equal(view.tools.get("t1")!.status, "interrupted");
  const failed = viewOf([d.user("q"), d.toolUse("t1", "bash", {}), d.toolResult("t1", "bash", "exit 1", true)]);
  assert.equal(failed.tools.get("t1")!.status, "error");
});

test("an interrupted answer: the text marked interrupted settles the streamed block, once, and is the last answer", () => {
  const view = viewOf([
    d.sessionStart(), { kind: "local-prompt", text: "hi" }, d.user("hi"), d.delta("Said "), d.delta("so far"), d.contentEnd(),
    { kind: "text", role: "assistant", content: "Said so far", interrupted: true },
  ]);
  reduce(view, stamp(d.result({ status: "interrupted", is_error: true, text: "Said so far" })));
  assert.deepEqual(brief(view), ["user:sent:hi", "assistant:done:Said so far", "notice:warning:Interrupted."]);
  assert.equal(view.lastAnswer, "Said so far");
});

test("clearing the view (/new, a resume) forgets the old session's cost, context and last prompt", () => {
  const view = viewOf([{ kind: "local-prompt", text: "q" }, d.user("q"), d.result({ cost_usd: 0.5, context: { used: 900, window: 1000 } } as never)]);
  assert.deepEqual([view.costUsd, view.context?.used, view.lastPrompt], [0.5, 900, "q"]);
  reduce(view, { kind: "local-clear" });
  assert.deepEqual([view.costUsd, view.context, view.lastPrompt, view.items.length], [undefined, undefined, undefined, 0]);
});
