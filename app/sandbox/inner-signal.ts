import { readdirSync, readFileSync } from "node:fs";

/**
 * Linux: SIGTERMs a sandboxed command's processes, the way a signal to its process group
 * reaches an unconfined one. bubblewrap passes no signal on, and a signal to it (the
 * spawned group's leader) ends the sandbox at once: its PID namespace goes with SIGKILL.
 * So the processes of the innermost PID namespace under `pid` are signalled directly,
 * except that namespace's init (bubblewrap's, or the seccomp helper's), whose end would
 * end them all. Returns whether there was any. Contract: never throws.
 */
export function terminateInside(pid: number): boolean {
  const targets = innermost(pid);
  for (const target of targets) {
    try {
      process.kill(target, "SIGTERM");
    } catch {
      // gone meanwhile
    }
  }
  return targets.length > 0;
}

/** Host pids of the descendants of `root` in the deepest PID namespace among them, but its init. */
function innermost(root: number): number[] {
  const children = new Map<number, number[]>();
  const nsPids = new Map<number, string[]>();
  let names: string[];
  try {
    names = readdirSync("/proc").filter((name) => /^\d+$/.test(name));
  } catch {
    return [];
  }
  for (const name of names) {
    try {
      const status = readFileSync(`/proc/${name}/status`, "latin1");
      const ppid = Number(/^PPid:\s*(\d+)/m.exec(status)?.[1]);
      const ns = /^NSpid:\s*(.+)$/m.exec(status)?.[1]?.trim().split(/\s+/) ?? [];
      const pid = Number(name);
      nsPids.set(pid, ns);
      children.set(ppid, [...(children.get(ppid) ?? []), pid]);
    } catch {
      // gone, or not ours to read
    }
  }
  const own = nsPids.get(root)?.length ?? 1;
  const found: number[] = [];
  for (let queue = [...(children.get(root) ?? [])]; queue.length; ) {
    const pid = queue.shift()!;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  const depth = Math.max(0, ...found.map((pid) => nsPids.get(pid)?.length ?? 0));
  if (depth <= own) return [];
  return found.filter((pid) => {
    const ns = nsPids.get(pid)!;
    return ns.length === depth && ns[ns.length - 1] !== "1";
  });
}
