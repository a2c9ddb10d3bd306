import { readFileSync } from "node:fs";

/** Who holds a session: pid plus the process start time, so a reused pid is not mistaken for the holder. */
export interface ProcessClaim {
  pid: number;
  /** Clock ticks since boot (Linux `/proc/<pid>/stat` field 22); null where unknown. */
  start: number | null;
}

type Probe = { alive: false } | { alive: true; start: number | null };

/** Liveness and start time of `pid`; on Linux from /proc, elsewhere from `kill(pid, 0)` with no start time. */
export function probeProcess(pid: number): Probe {
  if (process.platform === "linux") {
    let stat: string;
    try {
      stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    } catch {
      return { alive: false };
    }
    // The command name (field 2) may contain spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const state = fields[0];
    // A zombie has exited; it only waits for its parent to reap it.
    if (state === "Z" || state === "X") return { alive: false };
    const start = Number(fields[22 - 3]);
    return { alive: true, start: Number.isFinite(start) ? start : null };
  }
  try {
    process.kill(pid, 0);
    return { alive: true, start: null };
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM" ? { alive: true, start: null } : { alive: false };
  }
}

let own: ProcessClaim | undefined;

/** The claim this process writes. */
export function ownClaim(): ProcessClaim {
  if (!own) {
    const probe = probeProcess(process.pid);
    own = { pid: process.pid, start: probe.alive ? probe.start : null };
  }
  return own;
}

/** True when the claim's process still runs: same pid, not a zombie, and (where known) the same start time. */
export function isClaimLive(claim: ProcessClaim): boolean {
  const probe = probeProcess(claim.pid);
  if (!probe.alive) return false;
  return claim.start === null || probe.start === null || probe.start === claim.start;
}

/** True when the claim was written by this process. */
export function isOwnClaim(claim: ProcessClaim): boolean {
  const me = ownClaim();
  return claim.pid === me.pid && claim.start === me.start;
}
