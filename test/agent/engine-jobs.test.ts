import { after, test } from "node:test";
import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { EventBus } from "../../protocol/bus.js";
import { request } from "../../protocol/client.js";
import type { KeenEvent } from "../../protocol/events.js";
import { createSessionEngine, type EngineSetup } from "../../app/agent/engine.js";
import type { JobControl } from "../../app/agent/engine-types.js";
import { JobRegistry, type JobInfo } from "../../app/tools/jobs.js";
import { openStore } from "../../storage/level-store.js";
import { FakeProvider } from "../fakes/fake-provider.js";
import { makeTempDir } from "../temp.js";

/* kill-job through the whole engine: it acts at once, as interrupt does, and reaches the jobs of the setup prepared last. */

const root = makeTempDir("keen-engine-jobs-");
after(() => rmSync(root, { recursive: true, force: true }));

test("kill-job is answered while an earlier command still waits (a setup being prepared), and after the job's killed event", async () => {
  const events: KeenEvent[] = [];
  const bus = new EventBus();
  bus.subscribe((e) => void events.push(e));
  const job: JobInfo = { id: "job-1", command: "npm run dev", state: "running", exit_code: null, started_at: 1, pid: 9 };
  let report: (info: JobInfo) => void = () => {};
  const jobs: JobControl = {
    list: () => [{ ...job }],
    async kill() {
      Object.assign(job, { state: "killed", ended_at: 2 });
      report({ ...job });
      return { ...job };
    },
  };
  const setup = (modelRef: string): EngineSetup => ({
    modelRef, provider: new FakeProvider([]), tools: [], system: "sys", contextWindow: 1000, perTurn: () => ({ policies: [], tools: [] }), jobs,
    attach: (emit) => void (report = (info) => void emit({ kind: "job", job_id: info.id, command: info.command, state: info.state, exit_code: info.exit_code, started_at: info.started_at })),
  });
  let release!: (value: EngineSetup) => void;
  const held = new Promise<EngineSetup>((resolve) => (release = resolve));
  let ids = 0;
  const engine = createSessionEngine({
    store: openStore(join(root, "s")), bus, headless: true, cwd: root, permissionMode: "ask", interactive: true, earlyNews: true,
    // The first model's setup is ready; the second one's waits until the test releases it.
    prepare: async (session) => (session.model === "fake/other" ? held : setup("fake/first")),
    checkModel: (ref) => ref, listModels: () => [],
    retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 0 },
    newId: () => `id-${String(ids++).padStart(4, "0")}`,
  });
  await engine.prepare();
  assert.ok((await request(engine, { kind: "set-model", model: "fake/other" })).ok);
  const models = request(engine, { kind: "list-models" });
  // Were kill-job ordered, it would wait for list-models, which waits for the test: fail instead of hanging.
  let guard: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => (guard = setTimeout(() => reject(new Error("kill-job waited behind list-models")), 30_000)));
  const killed = await Promise.race([request(engine, { kind: "kill-job", job_id: "job-1" }), stuck]).finally(() => clearTimeout(guard));
  assert.deepEqual([killed.ok, killed.ok && killed.data], [true, { job_id: "job-1", state: "killed", exit_code: null }]);
  const kinds = events.map((e) => (e.kind === "response" ? `response:${e.command}` : e.kind));
  assert.ok(kinds.indexOf("job") >= 0 && kinds.indexOf("job") < kinds.indexOf("response:kill-job"), kinds.join(" "));
  assert.ok(!kinds.includes("response:list-models"), "the earlier list-models still waits for its setup");
  release(setup("fake/other"));
  assert.ok((await models).ok);
  await request(engine, { kind: "shutdown" });
});

test("two kill-jobs for one job at once: one answer says killed, the other job_ended", async () => {
  const bus = new EventBus();
  const jobs = new JobRegistry();
  const job = jobs.start({ command: "sleep 60", script: "exec sleep 60", cwd: root, env: process.env });
  const setup: EngineSetup = {
    modelRef: "fake/first", provider: new FakeProvider([]), tools: [], system: "sys", contextWindow: 1000, perTurn: () => ({ policies: [], tools: [] }), jobs,
  };
  const engine = createSessionEngine({
    store: openStore(join(root, "s2")), bus, headless: true, cwd: root, permissionMode: "ask", interactive: true,
    prepare: async () => setup, checkModel: (ref) => ref, listModels: () => [],
    retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 0 },
    newId: (() => { let n = 0; return () => `id-${n++}`; })(),
  });
  await engine.prepare();
  const answers = await Promise.all([request(engine, { kind: "kill-job", job_id: job.id }), request(engine, { kind: "kill-job", job_id: job.id })]);
  assert.deepEqual(answers.map((a) => (a.ok ? "killed" : a.error_code)).sort(), ["job_ended", "killed"]);
  assert.equal(jobs.list()[0]!.state, "killed");
  await request(engine, { kind: "shutdown" });
});

test("a job killed between turns is stored, so the session read back does not show it running", async () => {
  const bus = new EventBus();
  const jobs = new JobRegistry();
  const store = openStore(join(root, "s3"));
  const setup: EngineSetup = {
    modelRef: "fake/first", provider: new FakeProvider([{ text: "started it" }]), tools: [], system: "sys", contextWindow: 1000,
    perTurn: () => ({ policies: [], tools: [] }), jobs,
    attach: (emit) => jobs.onChange(({ id, ...info }) => void emit({ kind: "job", job_id: id, ...info }).catch(() => {})),
  };
  let n = 0;
  const engine = createSessionEngine({
    store, bus, headless: true, cwd: root, permissionMode: "ask", interactive: true,
    prepare: async () => setup, checkModel: (ref) => ref, listModels: () => [],
    retry: { maxRetries: 0, maxWaitMs: 0, idleTimeoutMs: 1000, baseDelayMs: 0 },
    newId: () => `id-${n++}`,
  });
  const prompted = await request(engine, { kind: "prompt", text: "start a server" });
  assert.ok(prompted.ok);
  const sessionId = (await store.list())[0]!.id;
  // Started after the turn, as a job the model started would still be running now.
  const job = jobs.start({ command: "sleep 60", script: "exec sleep 60", cwd: root, env: process.env });
  assert.ok((await request(engine, { kind: "kill-job", job_id: job.id })).ok);
  const states = (await store.load(sessionId)).flatMap((e) => (e.kind === "job" ? [e.state] : []));
  assert.deepEqual(states, ["running", "killed"]);
  await request(engine, { kind: "shutdown" });
});
