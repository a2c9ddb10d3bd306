import { createHash } from "node:crypto";
import { existsSync, readFileSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, relative, resolve } from "node:path";
import * as z from "zod";
import { cliTool, cliToolName } from "../agent/cli-tools.js";
import { lazy } from "../../protocol/lazy.js";

/*
 * Hooks as configured (docs/extensions.md "Hooks"), in Claude Code's shape so its settings
 * copy over: `hooks: { PreToolUse: [{ matcher: "Bash|Edit", hooks: [{ type: "command",
 * command: "…", timeout: 30 }] }] }`. The user's config needs no trust; a project's hooks
 * (`.keen/config.json`, and read-only `.claude/settings.json` and `.claude/settings.local.json`)
 * run code of the repository's choosing, so they run only once `keen trust` recorded the
 * digest of exactly this content (digestProjectHooks).
 */

/** The hook events Keen runs. */
export const HOOK_EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "PreCompact", "Notification"] as const;
export type HookEventName = (typeof HOOK_EVENTS)[number];

/** Seconds a hook may run when it sets no `timeout` (Claude Code's default). */
export const DEFAULT_HOOK_TIMEOUT_S = 60;

const makeHookCommandSchema = () => z.strictObject({
  type: z.literal("command"),
  command: z.string().min(1),
  /** Seconds; the hook is killed after it (default 60). */
  timeout: z.number().positive().max(3600).optional(),
});
const makeHooksSchema = () =>
  z.partialRecord(z.enum(HOOK_EVENTS), z.array(z.strictObject({ matcher: z.string().optional(), hooks: z.array(hookCommandSchema()) })));
const hookCommandSchema = lazy(makeHookCommandSchema);

/** `hooks` in Keen's user config and `.keen/config.json`: the events Keen runs, nothing else (a typo is an error, not a hook that never runs). */
export const hooksSchema = lazy(makeHooksSchema);
export type HooksConfig = z.infer<ReturnType<typeof makeHooksSchema>>;

/** One hook command, ready to run. */
export interface HookSpec {
  event: HookEventName;
  /** As configured; "" matches everything. */
  matcher: string;
  command: string;
  timeoutMs: number;
  source: "user" | "project";
  /** The file it comes from, for messages. */
  file: string;
}

/** A session's hooks: those that run, and project hooks waiting for `keen trust`. */
export interface CollectedHooks {
  hooks: HookSpec[];
  untrusted: HookSpec[];
  /** Digest of every project hook source (absent: the project has none). */
  digest?: string;
  /** Problems with a `.claude/settings*.json` (unreadable, invalid): never fatal, that file is Claude Code's. */
  warnings: string[];
}

/** The files of Claude Code's project settings whose `hooks` Keen reads (read only; Keen never writes them). */
export const CLAUDE_SETTINGS = [".claude/settings.json", ".claude/settings.local.json"];

/** One trust decision for a workspace's project hooks, bound to their digest. */
export interface HooksTrust {
  sha256: string;
  /** The user said no when the TUI asked: not asked again until the hooks change. */
  declined?: boolean;
}

/**
 * The hooks of a session: the user's, then the project's when `trust` holds for their
 * current digest. `claude: false` leaves out `.claude/settings*.json` (the CLI runner:
 * the claude CLI runs those itself). Never throws for a project file.
 */
export function collectHooks(input: {
  user?: HooksConfig; userFile: string; project?: HooksConfig; workspace: string; trust?: Record<string, HooksTrust>; claude?: boolean;
}): CollectedHooks {
  const warnings: string[] = [];
  const user = specsOf(input.user, "user", input.userFile);
  const sources = projectSources(input.workspace, input.project, warnings);
  if (!sources.length) return { hooks: user, untrusted: [], warnings };
  const digest = digestOf(input.workspace, sources);
  const decision = input.trust?.[input.workspace];
  const trusted = decision?.sha256 === digest && !decision.declined;
  const project = sources.filter((s) => input.claude !== false || !s.file.startsWith(".claude/"))
    .flatMap((s) => specsOf(s.hooks, "project", join(input.workspace, s.file)));
  return trusted ? { hooks: [...user, ...project], untrusted: [], digest, warnings } : { hooks: user, untrusted: project, digest, warnings };
}

/** The digest `keen trust` records for a workspace's project hooks; undefined when it has none. */
export function digestProjectHooks(workspace: string, project?: HooksConfig): string | undefined {
  const sources = projectSources(workspace, project, []);
  return sources.length ? digestOf(workspace, sources) : undefined;
}

/** The project hooks of a workspace, for a person deciding whether to trust them: one line each. */
export function describeProjectHooks(workspace: string, project?: HooksConfig): string[] {
  return projectSources(workspace, project, []).flatMap((s) =>
    specsOf(s.hooks, "project", s.file).map((h) => `${h.event}${h.matcher ? ` [${h.matcher}]` : ""}: ${h.command}  (${s.file})`));
}

/**
 * Whether a hook's matcher selects `names` (a tool's names, a SessionStart source, …):
 * empty or `*` matches all; otherwise the whole name must match it as a regular expression
 * (`Bash|Edit`, `mcp__github__.*`), as in Claude Code. A matcher that is no valid expression
 * matches only a name equal to it.
 */
export function matcherMatches(matcher: string, names: string[]): boolean {
  if (!matcher || matcher === "*") return true;
  let pattern: RegExp;
  try {
    pattern = new RegExp(`^(?:${matcher})$`);
  } catch {
    return names.includes(matcher);
  }
  return names.some((name) => pattern.test(name));
}

/**
 * Every name a tool call answers to in a matcher: Keen's (`bash`) and Claude Code's (`Bash`),
 * from THE table in app/agent/cli-tools.ts, so `"matcher": "Bash"` selects Keen's bash and a
 * relayed CLI ask alike.
 */
export function toolNames(name: string): string[] {
  return [...new Set([name, cliToolName(name), cliTool(name)?.keen ?? name])];
}

interface ProjectSource {
  /** Relative to the workspace. */
  file: string;
  hooks: HooksConfig;
}

function projectSources(workspace: string, project: HooksConfig | undefined, warnings: string[]): ProjectSource[] {
  const sources: ProjectSource[] = [];
  if (project && Object.keys(project).length) sources.push({ file: ".keen/config.json", hooks: project });
  for (const file of CLAUDE_SETTINGS) {
    const hooks = readClaudeHooks(join(workspace, file), warnings);
    if (hooks && Object.keys(hooks).length) sources.push({ file, hooks });
  }
  return sources;
}

/**
 * The `hooks` of a Claude Code settings file, leniently: events Keen does not run and
 * hooks that are not commands (`prompt`, `http`) are left out, as are the other settings.
 */
function readClaudeHooks(file: string, warnings: string[]): HooksConfig | undefined {
  if (!existsSync(file)) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    warnings.push(`${file}: not valid JSON (${error instanceof Error ? error.message : String(error)}); its hooks are not used`);
    return undefined;
  }
  const hooks = (raw as { hooks?: unknown } | null)?.hooks;
  if (!hooks || typeof hooks !== "object") return undefined;
  const out: HooksConfig = {};
  for (const event of HOOK_EVENTS) {
    const groups = (hooks as Record<string, unknown>)[event];
    if (!Array.isArray(groups)) continue;
    const kept = groups.flatMap((group) => {
      const g = group as { matcher?: unknown; hooks?: unknown };
      const commands = (Array.isArray(g?.hooks) ? g.hooks : []).flatMap((h) => {
        const parsed = hookCommandSchema().safeParse(h);
        return parsed.success ? [parsed.data] : [];
      });
      return commands.length ? [{ ...(typeof g.matcher === "string" ? { matcher: g.matcher } : {}), hooks: commands }] : [];
    });
    if (kept.length) out[event] = kept;
  }
  return out;
}

function specsOf(config: HooksConfig | undefined, source: HookSpec["source"], file: string): HookSpec[] {
  const specs: HookSpec[] = [];
  for (const event of HOOK_EVENTS) {
    for (const group of config?.[event] ?? []) {
      for (const hook of group.hooks) {
        specs.push({ event, matcher: group.matcher ?? "", command: hook.command, timeoutMs: (hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000, source, file });
      }
    }
  }
  return specs;
}

/**
 * Binds trust to what would run: each source's hooks, and the content of every file inside
 * the workspace that a command names by a path (`.claude/hooks/check.sh`,
 * `"$CLAUDE_PROJECT_DIR"/hooks/x.py`), so editing such a script revokes the trust too.
 */
function digestOf(workspace: string, sources: ProjectSource[]): string {
  const scripts = new Map<string, string>();
  for (const source of sources) {
    for (const spec of specsOf(source.hooks, "project", source.file)) {
      for (const path of scriptPaths(workspace, spec.command)) scripts.set(relative(workspace, path), fileDigest(path));
    }
  }
  const content = JSON.stringify({ sources, scripts: [...scripts.entries()].sort() });
  return createHash("sha256").update(content).digest("hex");
}

function scriptPaths(workspace: string, command: string): string[] {
  const words = command.replace(/\$\{?(CLAUDE_PROJECT_DIR|KEEN_PROJECT_DIR)\}?/g, workspace).split(/[\s;&|()<>]+/);
  const paths: string[] = [];
  for (const word of words) {
    const bare = word.replace(/^['"]+|['"]+$/g, "").replace(/["']/g, "");
    if (!bare.includes("/")) continue;
    const path = isAbsolute(bare) ? bare : resolve(workspace, bare);
    const rel = relative(workspace, path);
    if (rel.startsWith("..") || isAbsolute(rel)) continue;
    paths.push(path);
  }
  return paths;
}

function fileDigest(path: string): string {
  try {
    if (!statSync(path).isFile()) return "not a file";
    return createHash("sha256").update(readFileSync(realpathSync(path))).digest("hex");
  } catch {
    return "missing";
  }
}
