/**
 * A separate keen-like process for the storage tests:
 *   store-worker.ts <dataDir> hold <id>              claim, print "claimed", wait to be killed
 *   store-worker.ts <dataDir> append <id> <n> [tag]   create, claim, n appends of one event each, release; print ms
 *   store-worker.ts <dataDir> stream <id>             append forever, printing each acknowledged seq
 *   store-worker.ts <dataDir> list                    list repeatedly until stdin ends, print the count of calls
 *   store-worker.ts <dataDir> load <id> <ms>          load repeatedly for ms, print lengths seen
 */
import type { KeenEvent } from "../../protocol/events.js";
import { openStore } from "../../storage/level-store.js";

const [dataDir, command, ...args] = process.argv.slice(2);
const store = openStore(dataDir!);

/** A text event whose content carries its writer and sequence, so tests can check order. */
function textEvent(id: string, tag: string, i: number): KeenEvent {
  return { kind: "text", conversation_id: id, ts: Date.now(), role: "assistant", content: `${tag}:${i}` };
}

async function main() {
  if (command === "hold") {
    await store.claim(args[0]!);
    process.stdout.write("claimed\n");
    setInterval(() => {}, 60_000);
  } else if (command === "append") {
    const [id, n, tag = "w"] = args as [string, string, string?];
    const now = Date.now();
    const started = performance.now();
    await store.create({ id, title: tag, cwd: "/", model: "fake/m", created: now, updated: now, status: "running" });
    await store.claim(id);
    for (let i = 0; i < Number(n); i++) await store.append(id, [textEvent(id, tag, i)]);
    await store.release(id, "success");
    process.stdout.write(`done ${Math.round(performance.now() - started)}\n`);
  } else if (command === "stream") {
    const id = args[0]!;
    for (let i = 0; ; i++) {
      await store.append(id, [textEvent(id, "s", i)]);
      process.stdout.write(`${i}\n`);
    }
  } else if (command === "list") {
    // Until the test closes stdin, once the writers are done: the lists overlap every write, and
    // no fixed spell of busy listing outlasts them.
    let open = true;
    process.stdin.on("end", () => (open = false)).resume();
    let calls = 0;
    do {
      await store.list();
      calls++;
    } while (open);
    process.stdout.write(`${calls}\n`);
  } else if (command === "load") {
    const until = Date.now() + Number(args[1]);
    const lengths: number[] = [];
    while (Date.now() < until) lengths.push((await store.load(args[0]!)).length);
    process.stdout.write(`${JSON.stringify(lengths)}\n`);
  } else {
    throw new Error(`unknown command ${command}`);
  }
}

main().catch((error) => {
  process.stderr.write(`${error?.name}: ${error?.message} ${JSON.stringify(error?.code ?? null)}\n`);
  process.exit(1);
});
