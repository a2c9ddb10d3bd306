/**
 * A separate process for keep-open.test.ts:
 *   keep-open-child.ts <dataDir> <id> <n> kill   n appends, print "stored", then SIGKILL itself (its handle still open)
 *   keep-open-child.ts <dataDir> <id> <n> exit   n appends, print "stored", then let the process end by itself
 *   keep-open-child.ts raw <dbPath>              open the database directly, once, no retry; print "opened"
 *   keep-open-child.ts wait <dbPath>             open it directly, retrying a held lock as the store does (15 s); print "opened"
 */
import { Level } from "level";
import type { KeenEvent } from "../../protocol/events.js";
import { openStore } from "../../storage/level-store.js";

const [first, second, third, fourth] = process.argv.slice(2);

async function openDirectly(path: string, retry: boolean): Promise<void> {
  // The store's own busy timeout: a waiter kept out longer than that would report "busy".
  const deadline = Date.now() + 15_000;
  for (;;) {
    const db = new Level(path);
    try {
      await db.open({ createIfMissing: false });
      await db.close();
      process.stdout.write("opened\n");
      return;
    } catch (error) {
      const code = (error as { cause?: { code?: string } }).cause?.code;
      if (!retry || code !== "LEVEL_LOCKED" || Date.now() > deadline) throw error;
      // The store's own backoff at its widest: a waiter is asleep for up to 20 ms between tries.
      await new Promise((resolve) => setTimeout(resolve, 10 + Math.random() * 10));
    }
  }
}

async function main() {
  if (first === "raw" || first === "wait") return openDirectly(second!, first === "wait");
  const store = openStore(first!);
  for (let i = 0; i < Number(third); i++) {
    const event: KeenEvent = { kind: "text", conversation_id: second!, ts: 0, role: "assistant", content: `c:${i}` };
    await store.append(second!, [event]);
  }
  process.stdout.write("stored\n");
  if (fourth === "kill") process.kill(process.pid, "SIGKILL");
}

main().catch((error) => {
  process.stderr.write(`${error?.name}: ${error?.message}\n`);
  process.exit(1);
});
