import { test } from "node:test";
import assert from "node:assert/strict";
import type { PermissionMode } from "../../protocol/commands.js";
import type { EventDraft } from "../../protocol/events.js";
import type { EngineContext } from "../../app/agent/engine-context.js";
import type { CurrentSession } from "../../app/agent/engine-session.js";
import { compact, rewind, shell, undo } from "../../app/agent/held-commands.js";
import { createPermissionGate } from "../../app/agent/permission-gate.js";
import type { EngineSetup, JobControl } from "../../app/agent/engine-types.js";
import { killJob } from "../../app/agent/job-commands.js";
import { newSession } from "../../app/agent/session-commands.js";
import type { JobInfo } from "../../app/tools/jobs.js";
import { setPermissionMode } from "../../app/agent/setting-commands.js";
import type { SessionStore } from "../../storage/store.js";

/* The command handlers outside engine.ts see the engine only through EngineContext: driven here with a fake one. */

function fakeContext(over: { active?: boolean; session?: CurrentSession; ceiling?: PermissionMode; jobs?: JobControl } = {}) {
  const emitted: EventDraft[] = [];
  const held: string[] = [];
  const chosen: PermissionMode[] = [];
  let session: CurrentSession = over.session ?? { id: "s1", cwd: "/work", model: "fake/m", started: false, seen: 0 };
  const emit = async (draft: EventDraft) => void emitted.push(draft);
  const respond: EngineContext["respond"] = (command, ok, extra = {}) => emit({ kind: "response", ...(command.id !== undefined ? { id: command.id } : {}), command: command.kind, ok, ...extra });
  const refuse: EngineContext["refuse"] = (command, code, error, data) => respond(command, false, { error, error_code: code, ...(data !== undefined ? { data } : {}) });
  let ids = 0;
  const ctx: EngineContext = {
    store: {} as SessionStore,
    options: {
      newId: () => `id-${ids++}`, retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 0 },
      checkModel: (ref) => ref, listModels: () => [], headless: true, interactive: false,
      modeCeiling: over.ceiling ? { mode: over.ceiling, source: "--permission-mode" } : undefined,
    },
    gate: createPermissionGate({ mode: "ask", interactive: false, emit, newId: () => "p" }),
    get session() {
      return session;
    },
    switchSession: (next) => void (session = next),
    replay: async () => {},
    emit, respond, refuse,
    refuseError: (command, error, fallback) => refuse(command, fallback ?? "failed", String(error)),
    active: () => over.active ?? false,
    // No setup: set-permission-mode reads no project floor then; the held commands get theirs from holdSession.
    setupFor: () => Promise.reject(new Error("no setup in this test")),
    peekSetup: () => undefined,
    latestSetup: () => (over.jobs ? ({ jobs: over.jobs } as EngineSetup) : undefined),
    chooseMode: (mode) => void chosen.push(mode),
    holdSession: async (current, label) => void held.push(`${current.id}:${label}`),
    flush: () => undefined,
  };
  return { ctx, emitted, held, chosen };
}

const codes = (emitted: EventDraft[]) => emitted.map((e) => (e.kind === "response" ? `${e.command}:${e.ok ? "ok" : e.error_code}` : e.kind));

test("while a turn is active, compact, shell, undo and rewind are refused as busy and hold nothing", async () => {
  const stored = { id: "s1", cwd: "/work", started: true, seen: 3, meta: { id: "s1", title: "t", cwd: "/work", model: "fake/m", created: 1, updated: 1, status: "success" as const } };
  const h = fakeContext({ active: true, session: stored });
  await compact(h.ctx, { kind: "compact", id: "1" });
  await shell(h.ctx, { kind: "shell", id: "2", command: "ls" });
  await undo(h.ctx, { kind: "undo", id: "3", confirm: true });
  await rewind(h.ctx, { kind: "rewind", id: "4", to: 1 });
  assert.deepEqual(codes(h.emitted), ["compact:busy", "shell:busy", "undo:busy", "rewind:busy"]);
  assert.deepEqual(h.held, []);
});

test("on a session not stored yet, compact, undo and rewind say there is nothing to act on; shell holds (and creates) it", async () => {
  const h = fakeContext();
  await compact(h.ctx, { kind: "compact", id: "1" });
  await undo(h.ctx, { kind: "undo", id: "2", confirm: true });
  await rewind(h.ctx, { kind: "rewind", id: "3", to: 1 });
  await shell(h.ctx, { kind: "shell", id: "4", command: "ls" });
  assert.deepEqual(codes(h.emitted), ["compact:nothing_to_compact", "undo:nothing_to_undo", "rewind:nothing_to_rewind"]);
  assert.deepEqual(h.held, ["s1:!ls"], "the user's command titles a session it creates");
});

test("new-session switches the context's session: a new id, the chosen model kept, standing rules dropped", async () => {
  const h = fakeContext();
  h.ctx.gate.rules.set("bash", "allow");
  await newSession(h.ctx, { kind: "new-session", id: "1", cwd: "/elsewhere" });
  assert.equal(h.ctx.session.id, "id-0");
  assert.equal(h.ctx.session.model, "fake/m");
  assert.equal(h.ctx.gate.rules.size, 0);
  assert.deepEqual(h.emitted, [{ kind: "response", id: "1", command: "new-session", ok: true, data: { session_id: "id-0", cwd: "/elsewhere" } }]);
});

test("set-permission-mode chooses through the context only within the ceiling", async () => {
  const h = fakeContext({ ceiling: "accept-edits" });
  await setPermissionMode(h.ctx, { kind: "set-permission-mode", id: "1", mode: "auto" });
  await setPermissionMode(h.ctx, { kind: "set-permission-mode", id: "2", mode: "read-only" });
  assert.deepEqual(codes(h.emitted), ["set-permission-mode:permission_ceiling", "set-permission-mode:ok"]);
  assert.deepEqual(h.chosen, ["read-only"]);
});

/** A JobControl over fixed jobs: kill ends a running one as the registry does, telling `onEnd` (the registry's `job` event) first. */
function fakeJobs(jobs: JobInfo[], onEnd: (job: JobInfo) => void, exitsFirst = false): JobControl & { killed: string[] } {
  const killed: string[] = [];
  return {
    killed,
    list: () => jobs.map((job) => ({ ...job })),
    async kill(id) {
      const job = jobs.find((j) => j.id === id);
      if (!job) return undefined;
      if (job.state === "running") {
        killed.push(id);
        Object.assign(job, exitsFirst ? { state: "exited", exit_code: 0 } : { state: "killed", exit_code: null }, { ended_at: 2 });
        onEnd({ ...job });
      }
      return { ...job };
    },
  };
}

test("kill-job ends a running job (its job event first, then the answer); an unknown id and an ended job are refused with their codes", async () => {
  const running = (id: string): JobInfo => ({ id, command: "npm run dev", state: "running", exit_code: null, started_at: 1, pid: 42 });
  const jobs: JobInfo[] = [running("job-1"), { ...running("job-2"), state: "exited", exit_code: 3, ended_at: 2 }];
  let h!: ReturnType<typeof fakeContext>;
  const control = fakeJobs(jobs, (job) => void h.ctx.emit({ kind: "job", job_id: job.id, command: job.command, state: job.state, exit_code: job.exit_code, started_at: job.started_at }));
  h = fakeContext({ jobs: control });
  await killJob(h.ctx, { kind: "kill-job", id: "1", job_id: "job-1" });
  await killJob(h.ctx, { kind: "kill-job", id: "2", job_id: "job-1" });
  await killJob(h.ctx, { kind: "kill-job", id: "3", job_id: "job-2" });
  await killJob(h.ctx, { kind: "kill-job", id: "4", job_id: "job-9" });
  assert.deepEqual(codes(h.emitted), ["job", "kill-job:ok", "kill-job:job_ended", "kill-job:job_ended", "kill-job:unknown_job"]);
  assert.deepEqual(control.killed, ["job-1"], "only the running job was signalled");
  const answers = h.emitted.filter((e) => e.kind === "response") as Extract<EventDraft, { kind: "response" }>[];
  assert.deepEqual(answers[0]!.data, { job_id: "job-1", state: "killed", exit_code: null });
  assert.deepEqual(answers[1]!.data, { job_id: "job-1", state: "killed", exit_code: null });
  assert.deepEqual(answers[2]!.data, { job_id: "job-2", state: "exited", exit_code: 3 });
  assert.match(answers[3]!.error!, /no background job job-9/);
});

test("kill-job: with no setup yet there is no job; a job that exits on its own as it is killed is job_ended, not killed", async () => {
  const none = fakeContext();
  await killJob(none.ctx, { kind: "kill-job", id: "1", job_id: "job-1" });
  assert.deepEqual(codes(none.emitted), ["kill-job:unknown_job"]);
  const h = fakeContext({ jobs: fakeJobs([{ id: "job-1", command: "make", state: "running", exit_code: null, started_at: 1 }], () => {}, true) });
  await killJob(h.ctx, { kind: "kill-job", id: "2", job_id: "job-1" });
  assert.deepEqual(codes(h.emitted), ["kill-job:job_ended"]);
});
