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
  await h.waitFor("Esc closes)");
  assert.match(h.text(), /● running\s+1m1\ds\s+job-1\s+npm run dev -- --port 5173/);
  await h.keys("\x1b");
  assert.doesNotMatch(h.text(), /Esc closes\)/);
  h.engine.emit(job("killed", { ended_at: Date.now() }));
  await h.waitFor(/^(?![\s\S]*job running)/);
  await h.keys("/jobs\r");
  await h.waitFor("Esc closes)");
  assert.match(h.text(), /✗ killed\s+1m1\ds\s+job-1\s+npm run dev/);
  await h.keys("\x1b");
  await quit(h);
});

/** Whether the screen row showing `text` is drawn inverse there (the selection). */
function selectedRow(h: TuiHarness, text: string): boolean {
  const y = h.screen().findIndex((line) => line.includes(text));
  assert.ok(y >= 0, `${text} is on the screen:\n${h.text()}`);
  const buf = h.term.buffer.active;
  return Boolean(buf.getLine(buf.viewportY + y)!.getCell(h.screen()[y]!.indexOf(text))!.isInverse());
}

test("/jobs: arrows select a job, k kills the selected running one through kill-job, and the list follows the job event", async () => {
  const h = new TuiHarness(120, 30).start();
  await h.waitFor("Type a prompt");
  const started = Date.now() - 5000;
  h.engine.emit(job("running", { job_id: "job-1", command: "npm run dev", started_at: started }));
  h.engine.emit(job("running", { job_id: "job-2", command: "tsc --watch", started_at: Date.now() - 1000 }));
  await h.waitFor("2 jobs running (/jobs)");
  await h.keys("/jobs\r");
  await h.waitFor("↑↓ select, k kills, Esc closes");
  assert.ok(selectedRow(h, "job-2"), "the newest running job is selected first");
  assert.ok(!selectedRow(h, "job-1"));
  await h.keys("\x1b[B"); // down
  assert.ok(selectedRow(h, "job-1"));
  assert.ok(!selectedRow(h, "job-2"));
  // The fake engine ends the job as the real one does: its `job` event, then the answer.
  h.engine.onCommand = (command, engine) => {
    if (command.kind === "kill-job") engine.emit(job("killed", { job_id: command.job_id, command: "npm run dev", started_at: started, ended_at: Date.now() }));
  };
  await h.keys("k");
  assert.deepEqual(h.engine.commands("kill-job").map((c) => c.job_id), ["job-1"]);
  await h.waitFor(/✗ killed\s+\d+s\s+job-1\s+npm run dev/);
  assert.ok(selectedRow(h, "job-1"), "the selection stays on the job it was on");
  await h.waitFor("1 job running (/jobs)");
  // k on a job that has ended sends nothing.
  await h.keys("k");
  await h.waitFor("job-1 has already been killed");
  assert.equal(h.engine.commands("kill-job").length, 1);
  await h.keys("\x1b");
  await quit(h);
});

test("/jobs opened before any job: the first job that comes is selected and k kills it", async () => {
  const h = new TuiHarness(120, 30).start();
  await h.waitFor("Type a prompt");
  await h.keys("/jobs\r");
  await h.waitFor("No background jobs in this session");
  h.engine.emit(job("running", { job_id: "job-1", command: "npm run dev" }));
  await h.waitFor(/● running\s+1m1\ds\s+job-1/);
  assert.ok(selectedRow(h, "job-1"));
  await h.keys("k");
  assert.deepEqual(h.engine.commands("kill-job").map((c) => c.job_id), ["job-1"]);
  await h.keys("\x1b");
  await quit(h);
});

test("/jobs kill <id> kills by id, number or unique prefix; an ambiguous prefix and the engine's refusal are shown", async () => {
  const h = new TuiHarness(120, 30).start();
  await h.waitFor("Type a prompt");
  for (const id of ["job-1", "job-2", "job-12"]) h.engine.emit(job("running", { job_id: id, command: `sleep ${id}` }));
  await h.waitFor("3 jobs running (/jobs)");
  await h.keys("/jobs kill 2\r");
  await h.keys("/jobs kill job-12\r");
  await h.keys("/jobs kill job-1\r");
  assert.deepEqual(h.engine.commands("kill-job").map((c) => c.job_id), ["job-2", "job-12", "job-1"]);
  await h.keys("/jobs kill job\r");
  await h.waitFor('"job" matches several jobs: job-1, job-2, job-12');
  h.engine.answers["kill-job"] = { ok: false, error: "no background job job-7 in this session", error_code: "unknown_job" };
  await h.keys("/jobs kill 7\r");
  await h.waitFor("kill-job: no background job job-7 in this session");
  assert.deepEqual(h.engine.commands("kill-job").map((c) => c.job_id), ["job-2", "job-12", "job-1", "job-7"]);
  await quit(h);
});
