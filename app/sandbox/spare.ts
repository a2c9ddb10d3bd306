import { spawn, type ChildProcess } from "node:child_process";
import type { Socket } from "node:net";
import { signalGroup, trackGroup, untrackGroup } from "../tools/process-groups.js";

/*
 * A spare: the next sandboxed command's bubblewrap, proxy relay, seccomp helper and keeper shell,
 * started before the command is known (Linux). Starting them is most of what a confined call costs
 * (~100 ms of CPU, docs/performance.md); a spare does it while the model writes its next step, or
 * beside the command before it. Each command still gets a sandbox of its own: a spare serves one
 * command, and only one made for the same filesystem policy, directory and environment
 * (runtime.ts compares them when it takes one). Inside, the keeper waits for the command on stdin
 * (keeper.ts).
 */

/** Where a command runs: the bash tool's directory and environment (one object for a session's calls). */
export interface SpawnPlace {
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface Spare {
  /** The library's id of the wrap (its proxy credentials, its violation records). */
  readonly id: string;
  /** The filesystem policy it was wrapped with, as runtime.ts compares it. */
  readonly key: string;
  readonly place: SpawnPlace;
  readonly child: ChildProcess;
  /** Still waiting for its command: not exited, not failed, not given one. */
  waiting(): boolean;
  /** Gives it its command (once): it runs with stdin /dev/null, as the bash tool promises. */
  send(command: string): void;
  /** Ends it unused, with everything it started. */
  discard(): void;
}

/** Spawns `bash -c script` for a spare: detached (its own process group, as bash.ts runs commands), stdin a pipe. */
export function startSpare(script: string, id: string, key: string, place: SpawnPlace): Spare {
  const child = spawn("bash", ["-c", script], { cwd: place.cwd, env: place.env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  let dead = false;
  let sent = false;
  child.once("exit", () => (dead = true));
  child.once("error", () => (dead = true));
  // A spare that ended before its command was written: its exit is what bash.ts reports.
  child.stdin!.on("error", () => {});
  const pid = child.pid;
  if (pid !== undefined) trackGroup(pid);
  // Waiting, it must not keep Keen's process alive (a host done with its work, a test): held again once it runs.
  const handles = [child, child.stdin, child.stdout, child.stderr] as Array<{ ref?(): void; unref?(): void } | null>;
  for (const handle of handles) handle?.unref?.();
  return {
    id,
    key,
    place,
    child,
    waiting: () => !dead && !sent && child.exitCode === null && child.signalCode === null,
    send(command) {
      if (sent) return;
      sent = true;
      for (const handle of handles) handle?.ref?.();
      (child.stdin as Socket).end(`${command}\0`);
    },
    discard() {
      sent = true;
      if (pid === undefined) return;
      signalGroup(pid, "SIGKILL");
      untrackGroup(pid);
    },
  };
}
