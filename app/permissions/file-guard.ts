import { lstatSync, readFileSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import ignore, { type Ignore } from "ignore";
import type { FileGuard, GuardDecision } from "./guard.js";
import { createInodeIndex } from "./protected-inodes.js";
import { secretDirKind, secretFileKind } from "./secret-names.js";

/** Options for createFileGuard; `home` defaults to os.homedir() (tests pass a fake one). */
export interface FileGuardOptions {
  workspace: string;
  home?: string;
  /** More files or directories refused for reading and writing (absolute, or `~/…`). */
  extraDenied?: string[];
  /** Keen's own config and data (KEEN_HOME, its XDG config and data dirs, its config file): never read or written. */
  protectedPaths?: string[];
  /** The user's `guard.allowProjectConfigEdits`: lets the file tools write the project's `.keen/` directory. */
  allowProjectConfigEdits?: boolean;
  /**
   * Real paths of folders the file tools may read inside even where the location is otherwise
   * refused as Keen's own or another agent's (the discovered Agent Skills folders: a skill in
   * Keen's config directory or ~/.claude/skills). Reads only; the system paths, the configured
   * deny list and the secret-name rules still hold inside them. Asked on each check.
   */
  readableDirs?: () => readonly string[];
}

// Refused for reading and writing wherever the workspace is: kernel and device files
// (/proc/self/environ would leak Keen's own API keys, /dev/zero never ends), boot files,
// the password and sudo databases, and secrets mounted into containers.
const SYSTEM_DENIED = [
  "/proc", "/sys", "/dev", "/boot", "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-",
  "/etc/sudoers", "/etc/sudoers.d", "/run/secrets", "/var/run/secrets",
];

// Refused for writing: the OS and its packages. Writes outside the workspace are refused
// anyway, so this only bites when the workspace contains one of these (keen run in `/`);
// a workspace strictly inside one (/var/www/app, /usr/local/src/x) stays writable.
const SYSTEM_WRITE_DENIED = [
  "/etc", "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/var", "/opt", "/boot",
  "/private/etc", "/private/var", "/System", "/Library",
];

// Relative to home: where CLIs keep credentials, keys and tokens (shell histories hold
// tokens typed on command lines).
const HOME_CREDENTIALS = [
  ".ssh", ".aws", ".gnupg", ".azure", ".kube", ".docker/config.json", ".config/gcloud", ".config/gh",
  ".config/hub", ".config/op", ".netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", ".my.cnf",
  ".vault-token", ".terraform.d/credentials.tfrc.json", ".cargo/credentials", ".cargo/credentials.toml",
  ".gem/credentials", ".password-store", ".local/share/keyrings", ".bash_history", ".zsh_history",
  // Other coding agents keep their API keys and OAuth tokens here; a model that can read them
  // can act as the user with another vendor, one that can write them can redirect that agent.
  ".claude", ".claude.json", ".claude.json.backup", ".config/claude", ".codex", ".config/opencode",
  ".local/share/opencode", ".local/state/opencode", ".gemini", ".pi", ".qwen", ".cursor", ".copilot",
  ".config/github-copilot", ".continue", ".aider.conf.yml", ".config/goose", ".config/crush",
  ".local/share/crush", ".config/amp", ".local/share/amp", ".kodelet",
];

// Keen's own default locations: protected even in a run whose KEEN_HOME or XDG variables point
// elsewhere, since the next run may not set them.
const HOME_KEEN = [".config/keen", ".local/share/keen"];

function isInside(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith(sep) ? dir : dir + sep);
}

/**
 * The real path of `p`, also when it does not exist yet: the nearest existing ancestor is
 * realpath'd and the rest appended; a dangling symlink on the way is followed, so a write
 * through it cannot land somewhere the check did not see.
 */
export function realResolve(p: string, depth = 0): string {
  try {
    return realpathSync.native(p);
  } catch {
    // falls through: p, or something on its way, does not exist (or is a loop)
  }
  const parent = dirname(p);
  if (parent === p || depth > 40) return p;
  const joined = join(realResolve(parent, depth + 1), basename(p));
  try {
    if (lstatSync(joined).isSymbolicLink()) {
      return realResolve(resolve(dirname(joined), readlinkSync(joined)), depth + 1);
    }
  } catch {
    // does not exist: the joined path is the answer
  }
  return joined;
}

/**
 * The absolute paths the guard refuses to read or write whatever the workspace: credential
 * stores under home (both spellings, before and after symlinks), Keen's own config and data,
 * and the configured extras. The sandbox denies reads of the same list (plus the system
 * files of `sandboxDeniedSystemPaths`), so the two never disagree about a location.
 */
export function deniedLocations(opts: Pick<FileGuardOptions, "home" | "extraDenied" | "protectedPaths">) {
  const givenHome = resolve(opts.home ?? homedir());
  const home = realResolve(givenHome);
  const expand = (p: string) => (p === "~" ? home : p.startsWith("~/") ? join(home, p.slice(2)) : resolve(p));
  const homes = [...new Set([givenHome, home])];
  // Both spellings of home: the requested path is checked before symlinks are resolved too.
  const credentials = homes.flatMap((h) => HOME_CREDENTIALS.map((p) => join(h, p)));
  const extra = (opts.extraDenied ?? []).map((p) => realResolve(expand(p)));
  const keenOwn = [...new Set([
    ...homes.flatMap((h) => HOME_KEEN.map((p) => join(h, p))),
    ...(opts.protectedPaths ?? []).flatMap((p) => [resolve(expand(p)), realResolve(expand(p))]),
  ])];
  return { credentials, extra, keenOwn };
}

/**
 * The guard's system deny list without /proc, /sys and /dev: inside the sandbox those are
 * the sandbox's own (a fresh /proc of its PID namespace, a minimal /dev), not the host's.
 */
export const sandboxDeniedSystemPaths = (): string[] => SYSTEM_DENIED.filter((p) => !["/proc", "/sys", "/dev"].includes(p));

// Rules files re-read after this long, so a .gitignore edited mid-session (by any tool) counts.
const RULES_TTL_MS = 2000;

/** The filesystem guard for the file tools: deny lists, secret names, workspace-only writes, gitignore. */
export function createFileGuard(opts: FileGuardOptions): FileGuard {
  const workspace = resolve(opts.workspace);
  const root = realResolve(workspace);
  const { credentials, extra, keenOwn } = deniedLocations(opts);
  const inodes = createInodeIndex(() => [
    ...[...credentials, ...keenOwn, ...extra].map((path) => ({ path })),
    ...[...new Set([root, workspace])].map((path) => ({ path, secretsOnly: true })),
  ]);

  /** The names below the workspace (or, outside it, every name on the path) that name rules apply to. */
  const namesOf = (p: string) =>
    (isInside(p, root) ? relative(root, p) : isInside(p, workspace) ? relative(workspace, p) : p).split(sep).filter(Boolean);

  function check(input: string, write: boolean): GuardDecision {
    const requested = resolve(workspace, input);
    const real = realResolve(requested);
    const shown = real === requested ? requested : `${requested} (-> ${real})`;
    const refuse = (why: string): GuardDecision => ({ ok: false, reason: `Refused: ${why}` });
    const both = real === requested ? [real] : [requested, real];
    // Only the real path counts: a requested path that merely looks like it is inside a skill folder proves nothing.
    const skillRead = !write && (opts.readableDirs?.() ?? []).some((d) => isInside(real, d));

    for (const p of both) {
      if (SYSTEM_DENIED.some((d) => isInside(p, d))) {
        return refuse(`${shown} is a protected system path; Keen's file tools never read or write it.`);
      }
      if (!skillRead && keenOwn.some((d) => isInside(p, d))) {
        return refuse(`${shown} is Keen's own config or data; Keen's file tools never read or write it (it chooses the next run's model, keys and base URL).`);
      }
      if (!skillRead && credentials.some((d) => isInside(p, d))) {
        return refuse(`${shown} is a credential file; Keen's file tools never read or write secrets.`);
      }
      if (extra.some((d) => isInside(p, d))) {
        return refuse(`${shown} is on the configured deny list; Keen's file tools never read or write it.`);
      }
    }
    // Name rules hold for every directory on the way too: `secrets.env/db.txt`, `backup/.ssh/id`.
    const isDir = statSync(real, { throwIfNoEntry: false })?.isDirectory() ?? false;
    for (const p of both) {
      const names = namesOf(p);
      for (let i = 0; i < names.length; i++) {
        const file = i === names.length - 1 && !isDir;
        const kind = file ? secretFileKind(names[i]!) : secretDirKind(names[i]!);
        if (!kind) continue;
        const what = file ? kind : `${i === names.length - 1 ? "" : "inside "}a directory named ${names[i]}, like ${kind}`;
        return refuse(`${shown} is ${what}, which may hold secrets; Keen's file tools never read or write secrets.`);
      }
    }
    if (write) {
      if (!isInside(real, root)) {
        return refuse(`writing outside the workspace (${root}) is not allowed: ${shown}`);
      }
      if (SYSTEM_WRITE_DENIED.some((d) => isInside(real, d) && !(isInside(root, d) && root !== d))) {
        return refuse(`${shown} is in a protected system directory; Keen's file tools never write there.`);
      }
      // Hooks and config under .git run code and hold remotes; git itself manages them.
      if (relative(root, real).split(sep).includes(".git")) {
        return refuse(`${shown} is inside a .git directory; use git commands (bash) instead.`);
      }
      // The project config chooses the next run's model and tools: only the user may open it up.
      if (!opts.allowProjectConfigEdits && both.some((p) => namesOf(p).includes(".keen"))) {
        return refuse(`${shown} is in this project's .keen config directory, which chooses the next run's model and tools; writing it needs "guard": { "allowProjectConfigEdits": true } in your own Keen config.`);
      }
    }
    return { ok: true, path: real };
  }

  function checkHardLink(path: string, id: { dev: bigint; ino: bigint }): GuardDecision {
    const match = inodes.lookup(id);
    if (!match) return { ok: true, path };
    if ("path" in match) {
      return { ok: false, reason: `Refused: ${path} is a hard link to ${match.path}, which Keen's file tools never read or write.` };
    }
    return {
      ok: false,
      reason: `Refused: ${path} has more than one hard link, and Keen could not rule out that another one is a protected file (${match.unsure} holds too many files to check); it is not read.`,
    };
  }

  const rulesCache = new Map<string, { rules: Ignore | null; at: number }>();
  const readText = (p: string) => {
    try {
      return readFileSync(p, "utf8");
    } catch {
      return undefined;
    }
  };

  /** The gitignore rules of one directory (relative to it); the root also gets .git/info/exclude. */
  function rulesFor(dir: string): Ignore | null {
    const hit = rulesCache.get(dir);
    if (hit && Date.now() - hit.at < RULES_TTL_MS) return hit.rules;
    // info/exclude first: rules added later win, and .gitignore outranks it in git.
    const texts = [dir === root ? readText(join(root, ".git", "info", "exclude")) : undefined, readText(join(dir, ".gitignore"))];
    const present = texts.filter((t): t is string => t !== undefined);
    const rules = present.length > 0 ? ignore().add(present.join("\n")) : null;
    rulesCache.set(dir, { rules, at: Date.now() });
    return rules;
  }

  function isIgnored(path: string): boolean {
    const abs = resolve(path);
    const base = isInside(abs, root) ? root : isInside(abs, workspace) ? workspace : undefined;
    if (base === undefined || abs === base) return false;
    const parts = relative(base, abs).split(sep);
    // Walk down: once a directory is ignored, git never looks inside it, so nothing below can be re-included.
    for (let i = 0; i < parts.length; i++) {
      const isDir = i < parts.length - 1 || (lstatSync(abs, { throwIfNoEntry: false })?.isDirectory() ?? false);
      let ignored = false;
      // Each .gitignore from the root down to the entry's own directory; deeper files decide last.
      for (let j = 0; j <= i; j++) {
        const rules = rulesFor(join(root, ...parts.slice(0, j)));
        if (!rules) continue;
        const result = rules.test(parts.slice(j, i + 1).join("/") + (isDir ? "/" : ""));
        if (result.ignored) ignored = true;
        else if (result.unignored) ignored = false;
      }
      if (ignored) return true;
    }
    return false;
  }

  return {
    checkRead: (p) => check(p, false),
    checkWrite: (p) => check(p, true),
    checkHardLink,
    isIgnored,
  };
}
