import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { EventDraft } from "../../protocol/events.js";
import { draft as d } from "../fakes/fake-engine.js";
import { makeTempDir } from "../temp.js";
import { TuiHarness } from "./harness.js";

async function quit(h: TuiHarness): Promise<void> {
  await h.keys("\x03");
  await h.keys("\x04");
  const timeout = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the TUI did not exit:\n${h.text()}`)), 5000).unref());
  await Promise.race([h.result, timeout]);
}

const plan = [
  { content: "Start the dev server", status: "completed" },
  { content: "Fix the login page", status: "in_progress" },
  { content: "Run the e2e tests", status: "pending" },
] as const;

function job(state: "running" | "exited" | "killed", extra: Record<string, unknown> = {}): EventDraft {
  return { kind: "job", job_id: "job-1", command: "npm run dev -- --port 5173", state, pid: 4242, exit_code: null, started_at: Date.now() - 75_000, ...extra } as EventDraft;
}

test("the plan panel tops the side column while there is a plan; Alt-P and /layout plan hide and show it, remembered", async () => {
  const file = join(makeTempDir("keen-tui-plan-"), "tui-state.json");
  const h = new TuiHarness(120, 40).start({ uiPrefsFile: file });
  await h.waitFor("Type a prompt");
  assert.doesNotMatch(h.text(), /Plan \d/, "no plan, no panel");
  h.engine.emit(d.user("fix the login"));
  h.engine.emit({ kind: "plan-update", role: "assistant", tool_call_id: "c1", entries: plan as never });
  await h.waitFor("┌─ Plan 1/3");
  const screen = h.screen();
  const top = screen.findIndex((l) => l.includes("┌─ Plan 1/3"));
  const col = screen[top]!.indexOf("┌─ Plan 1/3");
  assert.ok(col > 60, "in the side column");
  assert.deepEqual(screen.slice(top + 1, top + 4).map((l) => l.slice(col + 1).replace(/│\s*$/, "").trimEnd()), [
    "[x] Start the dev server", "[~] Fix the login page", "[ ] Run the e2e tests",
  ]);
  assert.match(screen[top + 5]!.slice(col), /^┌─ Tools/, "the tool panel starts under it");

  await h.keys("\x1bp"); // Alt-P
  await h.waitFor("panes: transcript, tools, diff");
  assert.doesNotMatch(h.text(), /┌─ Plan/);
  assert.deepEqual(JSON.parse(readFileSync(file, "utf8")).panes, { tools: true, diff: true, plan: false });
  await quit(h);

  // Remembered: a new run with a plan keeps the panel hidden until /layout plan.
  const again = new TuiHarness(120, 40).start({ uiPrefsFile: file });
  await again.waitFor("Type a prompt");
  again.engine.emit({ kind: "plan-update", role: "assistant", tool_call_id: "c1", entries: plan as never });
  await again.waitFor("Plan · 1/3 done");
  assert.doesNotMatch(again.text(), /┌─ Plan/);
  await again.keys("/layout plan\r");
  await again.waitFor("┌─ Plan 1/3");
  assert.equal(JSON.parse(readFileSync(file, "utf8")).panes.plan, true);
  await quit(again);
});

test("on a narrow terminal the plan panel is a strip above the input; Alt-Z hides it with the other panes", async () => {
  const h = new TuiHarness(80, 40).start();
  await h.waitFor("Type a prompt");
  h.engine.emit({ kind: "plan-update", role: "assistant", tool_call_id: "c1", entries: plan as never });
  await h.waitFor("┌─ Plan 1/3");
  const screen = h.screen();
  const top = screen.findIndex((l) => l.startsWith("┌─ Plan 1/3"));
  assert.ok(top > 0, h.text());
  assert.match(screen[top + 2]!, /^│\[~\] Fix the login page/);
  await h.keys("\x1bz");
  await h.waitFor("zoomed");
  assert.doesNotMatch(h.text(), /┌─ Plan/);
  await quit(h);
});

test("running jobs are counted in the status bar; /jobs lists command, state and runtime", async () => {
  const h = new TuiHarness(120, 30).start();
  await h.waitFor("Type a prompt");
  assert.doesNotMatch(h.text(), /job/);
  h.engine.emit(job("running"));
  await h.waitFor("1 job running (/jobs)");
  await h.keys("/jobs\r");
  await h.waitFor("Jobs (Esc closes)");
  assert.match(h.text(), /● running\s+1m1\ds\s+job-1\s+npm run dev -- --port 5173/);
  await h.keys("\x1b");
  assert.doesNotMatch(h.text(), /Jobs \(Esc closes\)/);
  h.engine.emit(job("killed", { ended_at: Date.now() }));
  await h.waitFor(/^(?![\s\S]*job running)/);
  await h.keys("/jobs\r");
  await h.waitFor("Jobs (Esc closes)");
  assert.match(h.text(), /✗ killed\s+1m1\ds\s+job-1\s+npm run dev/);
  await h.keys("\x1b");
  await quit(h);
});
