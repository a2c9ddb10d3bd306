/*
 * The process groups Keen's commands run in (a bash call, a background job): each is spawned
 * detached, in a group of its own, so one signal reaches every process it started. Groups still
 * alive when Keen's process exits (a signal, a second Ctrl-C) are SIGKILLed then: no command or
 * job outlives the session.
 */
const live = new Set<number>();
let exitHookInstalled = false;

/** Sends `signal` to the group led by `pid`; a group that is gone already is no error. */
export function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // ESRCH: the group is already gone
  }
}

/** Notes a running group (killed at exit until `untrackGroup`). */
export function trackGroup(pid: number): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on("exit", killAllGroups);
  }
  live.add(pid);
}

export function untrackGroup(pid: number): void {
  live.delete(pid);
}

/** SIGKILLs every group still running. A CLI that handles SIGINT/SIGTERM itself should call it (or process.exit) there too. */
export function killAllGroups(): void {
  for (const pid of live) signalGroup(pid, "SIGKILL");
  live.clear();
}
