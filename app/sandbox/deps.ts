import { spawnSync } from "node:child_process";
import { accessSync, constants, mkdirSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs";
import { release } from "node:os";
import { delimiter, dirname, join } from "node:path";

/** Whether this machine can confine commands, and if not, what is missing and how to get it. */
export type SandboxSupport = { ok: true } | { ok: false; missing: string; install: string };

// Linux: the library needs bubblewrap (namespaces), socat (the proxy bridge into the
// network namespace) and ripgrep (expanding deny globs such as `**/.env`).
const LINUX_TOOLS: [command: string, pkg: string][] = [["bwrap", "bubblewrap"], ["socat", "socat"], ["rg", "ripgrep"]];

let probed: Map<string, SandboxSupport> | undefined;
let located: Map<string, Map<string, string | undefined>> | undefined;

/**
 * Where bwrap, socat and rg are on `env`'s PATH, and bash, the sandbox's shell (stat calls, no spawn;
 * cached per PATH for the process). bash is not a requirement checked here: Keen runs every command with it.
 */
export function linuxTools(env: NodeJS.ProcessEnv = process.env): { bwrap?: string; socat?: string; rg?: string; bash?: string } {
  return Object.fromEntries(locate(env));
}

function locate(env: NodeJS.ProcessEnv): Map<string, string | undefined> {
  const key = env.PATH ?? "";
  located ??= new Map();
  let found = located.get(key);
  if (!found) located.set(key, (found = new Map([...LINUX_TOOLS.map(([cmd]) => cmd), "bash"].map((cmd) => [cmd, which(cmd, env)]))));
  return found;
}

/**
 * Checks the platform's sandbox dependencies without loading the sandbox library
 * (a few stat calls, and on Linux one `bwrap` run: installed is not enough when the
 * kernel or a container forbids user namespaces). Cached per PATH for the process.
 * With `cacheFile`, the bwrap run's verdict is also kept on disk for the same bwrap
 * (path and mtime), kernel release and user: it costs ~8 ms, and every session of
 * every run would pay it before its first request.
 */
export function sandboxSupport(
  env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform, cacheFile?: string,
): SandboxSupport {
  const key = `${platform}\0${env.PATH ?? ""}`;
  probed ??= new Map();
  const hit = probed.get(key);
  if (hit) return hit;
  const result = check(env, platform, cacheFile);
  probed.set(key, result);
  return result;
}

function check(env: NodeJS.ProcessEnv, platform: NodeJS.Platform, cacheFile: string | undefined): SandboxSupport {
  if (platform === "darwin") return { ok: true };
  if (platform !== "linux") return { ok: false, missing: `a sandbox for ${platform}`, install: "Keen's sandbox runs on Linux and macOS only" };
  const found = locate(env);
  const missing = LINUX_TOOLS.filter(([cmd]) => !found.get(cmd));
  if (missing.length) {
    const pkgs = missing.map(([, pkg]) => pkg).join(" ");
    return { ok: false, missing: missing.map(([cmd, pkg]) => (cmd === pkg ? cmd : `${cmd} (${pkg})`)).join(", "), install: `apt-get install ${pkgs} (Debian/Ubuntu)` };
  }
  const bwrap = found.get("bwrap")!;
  const probeKey = cacheFile ? keyOf(bwrap) : undefined;
  const cached = probeKey ? readCache(cacheFile!, probeKey) : undefined;
  if (cached) return cached;
  const result = probeBwrap(bwrap);
  if (probeKey) writeCache(cacheFile!, probeKey, result);
  return result;
}

function probeBwrap(bwrap: string): SandboxSupport {
  const run = spawnSync(bwrap, ["--ro-bind", "/", "/", "--unshare-user", "--unshare-pid", "--unshare-net", "--proc", "/proc", "--dev", "/dev", "true"], {
    stdio: ["ignore", "ignore", "pipe"], timeout: 5000, encoding: "utf8",
  });
  if (run.status !== 0) {
    const why = (run.stderr || run.error?.message || `exit ${run.status}`).trim().split("\n")[0];
    return { ok: false, missing: `working user namespaces (bwrap: ${why})`, install: "allow unprivileged user namespaces (e.g. sysctl kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu 24.04)" };
  }
  return { ok: true };
}

/** What the probe's verdict depends on: which bwrap, the kernel, the user. */
function keyOf(bwrap: string): string | undefined {
  try {
    const real = realpathSync(bwrap);
    return JSON.stringify([real, statSync(real).mtimeMs, release(), process.getuid?.()]);
  } catch {
    return undefined;
  }
}

function readCache(file: string, key: string): SandboxSupport | undefined {
  try {
    const saved = JSON.parse(readFileSync(file, "utf8")) as { key?: string; result?: SandboxSupport };
    return saved.key === key && typeof saved.result?.ok === "boolean" ? saved.result : undefined;
  } catch {
    return undefined;
  }
}

function writeCache(file: string, key: string, result: SandboxSupport): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const tmp = `${file}.${process.pid}`;
    writeFileSync(tmp, JSON.stringify({ key, result }));
    renameSync(tmp, file);
  } catch {
    // A read-only data dir: probe again next time.
  }
}

function which(command: string, env: NodeJS.ProcessEnv): string | undefined {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, command);
    try {
      accessSync(path, constants.X_OK);
      return path;
    } catch {
      // not here
    }
  }
  return undefined;
}
