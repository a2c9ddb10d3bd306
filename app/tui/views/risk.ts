import { isAbsolute, relative, resolve } from "node:path";

/** A risky part of a shell command, as offsets into it, and why. */
export interface RiskSpan {
  start: number;
  end: number;
  reason: string;
}

const PATTERNS: [RegExp, string][] = [
  [/\b(?:sudo|doas)\b/g, "runs as root"],
  [/\b(?:curl|wget)\b[^|;&\n]*\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b/g, "pipes a download into a shell"],
  [/\bmkfs(?:\.\w+)?\b|\bdd\b[^;&|\n]*\bof=/g, "writes a disk"],
  [/\bgit\s+push\b[^;&|\n]*(?:\s--force\b|\s-f\b|\s--force-with-lease\b)/g, "force-pushes"],
  [/\bgit\s+(?:reset\s+--hard|clean\s+-[a-z]*f)/g, "discards work"],
  [/\bch(?:mod|own)\s+-R\b/g, "changes permissions recursively"],
  [/:\(\)\s*\{\s*:\|:&\s*\};:/g, "fork bomb"],
];

const SAFE_TARGETS = new Set(["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"]);

/**
 * The parts of a bash command a user should look at twice before allowing
 * it: rm -rf, sudo, curl … | sh, redirections outside the workspace, and a
 * few other destructive commands. A hint for the eye, not a guard.
 */
export function bashRisks(command: string, cwd: string): RiskSpan[] {
  const spans: RiskSpan[] = [];
  for (const [pattern, reason] of PATTERNS) {
    for (const m of command.matchAll(pattern)) spans.push({ start: m.index, end: m.index + m[0].length, reason });
  }
  for (const m of command.matchAll(/\brm\s+([^;&|\n]*)/g)) {
    const args = m[1]!;
    const flags = args.split(/\s+/).filter((a) => a.startsWith("-"));
    const recursive = flags.some((f) => f === "--recursive" || /^-[a-zA-Z]*[rR]/.test(f));
    const force = flags.some((f) => f === "--force" || /^-[a-zA-Z]*f/.test(f));
    if (recursive && force) spans.push({ start: m.index, end: m.index + m[0].trimEnd().length, reason: "deletes recursively" });
  }
  for (const m of command.matchAll(/(?:\d?>>?|&>>?)\s*([^\s;&|<>]+)/g)) {
    const target = m[1]!.replace(/^["']|["']$/g, "");
    if (SAFE_TARGETS.has(target) || target.startsWith("&")) continue;
    if (outside(target, cwd)) spans.push({ start: m.index, end: m.index + m[0].length, reason: "writes outside the workspace" });
  }
  return merge(spans);
}

function outside(target: string, cwd: string): boolean {
  if (target.startsWith("~") || target.startsWith("$")) return true;
  const abs = isAbsolute(target) ? target : resolve(cwd, target);
  const rel = relative(cwd, abs);
  return rel === ".." || rel.startsWith("../") || isAbsolute(rel);
}

function merge(spans: RiskSpan[]): RiskSpan[] {
  const sorted = spans.sort((a, b) => a.start - b.start);
  const out: RiskSpan[] = [];
  for (const s of sorted) {
    const last = out[out.length - 1];
    if (last && s.start <= last.end) {
      last.end = Math.max(last.end, s.end);
      if (!last.reason.includes(s.reason)) last.reason += `, ${s.reason}`;
    } else out.push({ ...s });
  }
  return out;
}
