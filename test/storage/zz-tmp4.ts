import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../storage/level-store.js";
import { newSessionId } from "../../storage/ids.js";
const dir = mkdtempSync(join(tmpdir(), "kc-")); const store = openStore(dir);
const id = newSessionId(); const lat: number[] = [];
for (let i = 0; i < 1000; i++) { const t = performance.now(); await store.append(id, [{ kind: "text", conversation_id: id, ts: 0, role: "assistant", content: "x ".repeat(200) }]); lat.push(performance.now() - t); }
const avg = lat.reduce((a, b) => a + b) / lat.length; lat.sort((a, b) => a - b);
console.log(process.env.TAG, "append avg", avg.toFixed(2), "p50", lat[500]!.toFixed(2), "p90", lat[900]!.toFixed(2), "p99", lat[990]!.toFixed(2), "files", readdirSync(join(dir, "sessions", id)).filter((f) => f.endsWith(".ldb")).length);
