import { MODE_CYCLE, isPermissionMode } from "../../protocol/modes.js";
import { uniquePrefixes } from "../../protocol/short-ids.js";
import { THEME_NAMES } from "../../themes/index.js";
import type { TuiController } from "./controller.js";
import { completeSlash, INIT_PROMPT } from "./slash.js";
import { disarmExport, exportTranscript } from "./export.js";
import { changePanes } from "./layout-actions.js";
import { fork, openRewind, undo } from "./rewind-actions.js";
import { killJobNamed, openJobs } from "./jobs-actions.js";
import { ago, type ListItem } from "./views/lists.js";

/** Runs a slash command typed in the prompt. Contract: never throws; failures become notices. */
export function runSlash(c: TuiController, name: string, arg: string): void {
  if (name !== "undo") c.ui.undoArmed = false;
  if (name !== "export") disarmExport(c);
  switch (name) {
    case "new": return c.newSession();
    case "sessions": return pickSession(c);
    case "model": return arg ? c.setModel(arg) : pickModel(c);
    case "mode": {
      if (!arg) return c.cycleMode();
      if (!isPermissionMode(arg)) return c.notice(`unknown mode "${arg}"; modes: ${MODE_CYCLE.join(", ")}`, "error");
      return c.setMode(arg);
    }
    case "theme": return setTheme(c, arg);
    case "compact":
      c.note("compacting…");
      return c.request({ kind: "compact", ...(arg ? { instructions: arg } : {}) });
    case "copy": {
      if (!c.view.lastAnswer) return c.note("no answer to copy yet");
      c.deps.copy?.(c.view.lastAnswer);
      return c.note(`copied ${c.view.lastAnswer.length} characters (OSC 52)`);
    }
    case "undo": return undo(c);
    case "rewind": return openRewind(c);
    case "fork": return fork(c, arg);
    case "export": return void exportTranscript(c, arg);
    case "layout": {
      const change = ({ tools: "tools", diff: "diff", plan: "plan", zoom: "zoom", all: "all", "": "zoom" } as const)[arg];
      if (!change) return c.notice(`unknown layout "${arg}"; use tools, diff, plan, zoom or all`, "error");
      return changePanes(c, change);
    }
    case "retry":
      if (!c.view.lastPrompt) return c.note("no prompt to retry yet");
      if (c.view.running) return c.note("a turn is running: Esc interrupts it first");
      return c.prompt(c.view.lastPrompt);
    case "init": return c.prompt(INIT_PROMPT);
    case "skills": return pickSkill(c);
    case "jobs": {
      const [sub, id = ""] = arg.split(/\s+/, 2);
      if (!arg) return openJobs(c);
      if (sub === "kill") return killJobNamed(c, id);
      return c.notice(`unknown /jobs argument "${arg}"; use /jobs or /jobs kill <id>`, "error");
    }
    case "help":
      c.loadCommands();
      c.ui.overlay = { kind: "help", scroll: 0 };
      return;
    case "exit": return c.deps.exit();
  }
}

function setTheme(c: TuiController, arg: string): void {
  const themeFor = c.deps.themeFor;
  if (!themeFor) return;
  const current = THEME_NAMES.indexOf(c.ui.theme.name);
  const name = arg || THEME_NAMES[(current + 1) % THEME_NAMES.length]!;
  try {
    c.ui.theme = themeFor(name);
    c.note(`theme: ${name}${c.ui.theme.mono ? " (NO_COLOR: monochrome)" : ""}`);
  } catch (error) {
    c.notice((error as Error).message, "error");
  }
}

function pickSession(c: TuiController): void {
  c.request({ kind: "list-sessions", cwd: c.view.cwd }, (r) => {
    if (!r.ok) return;
    const rows = [...r.data].sort((a, b) => b.updated - a.updated);
    if (!rows.length) return c.note("no stored sessions in this workspace");
    const now = c.now();
    // Ids made within a minute share their first 8 characters (they start with the time): each row gets the
    // shortest prefix no other listed session shares, as `keen sessions list` shows them.
    const short = uniquePrefixes(rows.map((s) => s.id));
    const width = Math.max(...[...short.values()].map((id) => id.length));
    const items: ListItem[] = rows.map((s) => ({
      label: `${short.get(s.id)!.padEnd(width)}  ${s.title.replace(/\s+/g, " ").slice(0, 60)}`,
      detail: [ago(s.updated, now), s.model, s.status && s.status !== "success" ? s.status : "", s.parent ? `fork of ${short.get(s.parent.id) ?? s.parent.id}` : "", s.id === c.view.sessionId ? "(this one)" : ""].filter(Boolean).join("  "),
    }));
    c.ui.overlay = { kind: "picker", title: "Sessions (Enter resumes)", items, values: rows.map((s) => s.id), selected: 0, pick: (id) => c.resume(id) };
    c.deps.requestFrame(true);
  });
}

/** `/skills`: the skills the engine found, then the folders it skipped and why; Enter on a skill starts a prompt naming it. */
function pickSkill(c: TuiController): void {
  c.request({ kind: "list-skills" }, (r) => {
    if (!r.ok) return;
    const { skills, skipped } = r.data;
    if (!skills.length && !skipped.length) return c.note("no skills: add folders with a SKILL.md to .keen/skills, .claude/skills, .agents/skills or your config's skills");
    const items: ListItem[] = [
      ...skills.map((s) => ({ label: s.name, detail: `${s.description} (${s.source}: ${s.path})` })),
      ...skipped.map((s) => ({ label: `✗ ${s.path}`, detail: `skipped: ${s.reason}` })),
    ];
    const values = [...skills.map((s) => s.name), ...skipped.map((s) => `\0${s.reason}`)];
    const pick = (value: string) => {
      if (value.startsWith("\0")) return c.notice(`skill skipped: ${value.slice(1)}`, "warning");
      c.editor.setText(`Use the ${value} skill to `);
    };
    c.ui.overlay = { kind: "picker", title: `Skills (${skills.length}; Enter starts a prompt using one)`, items, values, selected: 0, pick };
    c.deps.requestFrame(true);
  });
}

function pickModel(c: TuiController): void {
  c.request({ kind: "list-models" }, (r) => {
    if (!r.ok) return;
    const rows = [...r.data];
    if (!rows.length) {
      if (!c.showSetup("no models are available")) c.note("no models available");
      return;
    }
    rows.sort((a, b) => Number(b.available) - Number(a.available));
    const items = rows.map((m) => ({
      label: `${m.current ? "* " : "  "}${m.model}`,
      detail: m.available ? m.provider : "needs a key",
    }));
    const selected = Math.max(0, rows.findIndex((m) => m.current));
    c.ui.overlay = { kind: "picker", title: "Model (Enter uses it from the next turn)", items, values: rows.map((m) => m.model), selected, pick: (model) => c.setModel(model) };
    c.deps.requestFrame(true);
  });
}

/** How many paths an `@` completion asks the engine for. */
const FILE_COMPLETIONS = 50;

/**
 * Refreshes the completion list for the word at the cursor: `/command` at the
 * start, `@path` anywhere. Paths come from the engine (`list-files`, answered
 * with the session's filesystem guard), so the list shows when the answer
 * arrives, and only if the word at the cursor is still the one asked about.
 */
export function updateCompletion(c: TuiController): void {
  const { word, start } = c.editor.wordAtCursor();
  if (word.startsWith("/") && start === 0 && !c.editor.text.includes("\n")) {
    // The files may have changed: asked again when a command word begins; the list shows what is known until the answer.
    if (word === "/") {
      c.loadCommands(() => {
        const now = c.editor.wordAtCursor();
        if (now.start === 0 && now.word.startsWith("/")) showSlash(c, now.word);
      });
    }
    return showSlash(c, word);
  }
  if (word.startsWith("@")) {
    // Until the answer comes, a list for another word must not be accepted in this one's place.
    if (c.ui.completion?.start !== start) c.ui.completion = undefined;
    c.request({ kind: "list-files", query: word.slice(1), limit: FILE_COMPLETIONS }, (r) => {
      const now = c.editor.wordAtCursor();
      if (now.word !== word || now.start !== start) return;
      // A failed answer (no provider configured yet) shows no list; the engine's error is not news on every keystroke.
      const paths = r.ok ? r.data.paths : [];
      showCompletion(c, word, start, paths.map((p) => `@${p}`), paths.map((p) => ({ label: p, path: true })));
    });
    return;
  }
  c.ui.completion = undefined;
}

function showSlash(c: TuiController, word: string): void {
  const found = completeSlash(word, c.ui.customCommands);
  const values = found.map((s) => `/${s.name}${s.args ? " " : ""}`);
  showCompletion(c, word, 0, values, found.map((s) => ({ label: `/${s.name}${s.args ? ` ${s.args}` : ""}`, detail: s.help })));
}

function showCompletion(c: TuiController, word: string, start: number, values: string[], items: ListItem[]): void {
  if (!values.length || (values.length === 1 && values[0]!.trimEnd() === word)) {
    c.ui.completion = undefined;
    return;
  }
  const previous = c.ui.completion;
  const keep = previous && previous.start === start ? Math.min(previous.selected, values.length - 1) : 0;
  c.ui.completion = { items, values, selected: keep, start };
}

/** Replaces the word at the cursor with the selected completion. */
export function acceptCompletion(c: TuiController): void {
  const comp = c.ui.completion;
  if (!comp) return;
  const value = comp.values[comp.selected]!;
  const isDir = value.endsWith("/");
  c.editor.replaceBeforeCursor(comp.start, value.startsWith("@") && !isDir ? `${value} ` : value);
  c.ui.completion = undefined;
  if (isDir) updateCompletion(c);
}
