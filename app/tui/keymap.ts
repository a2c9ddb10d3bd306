/*
 * Every key binding in one table: the app dispatches from it and `?` /
 * `/help` print it, so the help can never disagree with the keys.
 */

/** Where a binding applies: everywhere, or only while that pane has the focus. */
export type KeyScope = "global" | "input" | "transcript" | "tools" | "diff";

/** What a key does; the app maps each action to one handler. */
export type KeyAction =
  | "send" | "newline" | "interrupt" | "cancel" | "exit-if-empty" | "history-prev" | "history-next" | "history-search"
  | "page-up" | "page-down" | "focus-next" | "cycle-mode" | "redraw" | "external-editor" | "toggle-thinking" | "toggle-output"
  | "help" | "complete" | "scroll-up" | "scroll-down" | "top" | "bottom" | "toggle-expand" | "next-diff" | "prev-diff"
  | "cursor-left" | "cursor-right" | "line-start" | "line-end" | "word-left" | "word-right" | "backspace" | "delete"
  | "delete-word" | "kill-line-start" | "kill-line-end"
  | "toggle-tools" | "toggle-diff" | "toggle-plan" | "zoom" | "suspend" | "toggle-mouse";

/** One binding: the key ids (see keys.ts `keyId`), what they do and how help shows them. */
export interface Binding {
  keys: string[];
  action: KeyAction;
  scope: KeyScope;
  label: string;
  help: string;
}

export const KEYMAP: Binding[] = [
  { keys: ["enter"], action: "send", scope: "input", label: "Enter", help: "send the prompt (queued under the input while a turn runs)" },
  { keys: ["M-enter", "C-j", "S-enter"], action: "newline", scope: "input", label: "Alt-Enter, Ctrl-J", help: "new line (Shift-Enter where the terminal reports it)" },
  { keys: ["escape"], action: "interrupt", scope: "global", label: "Esc", help: "interrupt the running turn; closes pop-ups; twice on an empty prompt: rewind (/rewind)" },
  { keys: ["C-c"], action: "cancel", scope: "global", label: "Ctrl-C", help: "interrupt the turn; when idle, press again to exit" },
  { keys: ["C-d"], action: "exit-if-empty", scope: "global", label: "Ctrl-D", help: "exit (on an empty prompt)" },
  { keys: ["up"], action: "history-prev", scope: "input", label: "Up", help: "line above, or the previous prompt; on an empty input, edit the last queued prompt" },
  { keys: ["down"], action: "history-next", scope: "input", label: "Down", help: "line below, or the next prompt" },
  { keys: ["C-r"], action: "history-search", scope: "input", label: "Ctrl-R", help: "search earlier prompts: type to narrow, Ctrl-R older, Enter/Right take it, Esc/Ctrl-G cancel" },
  { keys: ["pageup", "wheelup"], action: "page-up", scope: "global", label: "PgUp, wheel", help: "scroll the transcript (or the focused pane) up" },
  { keys: ["pagedown", "wheeldown"], action: "page-down", scope: "global", label: "PgDn, wheel", help: "scroll down" },
  { keys: ["tab"], action: "focus-next", scope: "global", label: "Tab", help: "completes / and @ words; otherwise focus: transcript, tools, diff, input" },
  { keys: ["S-tab"], action: "cycle-mode", scope: "global", label: "Shift-Tab", help: "cycle the permission mode (also /mode)" },
  { keys: ["C-l"], action: "redraw", scope: "global", label: "Ctrl-L", help: "redraw the screen" },
  { keys: ["C-g"], action: "external-editor", scope: "global", label: "Ctrl-G", help: "edit the prompt in $EDITOR" },
  { keys: ["C-t"], action: "toggle-thinking", scope: "global", label: "Ctrl-T", help: "show or fold thinking" },
  { keys: ["M-z"], action: "zoom", scope: "global", label: "Alt-Z", help: "zoom the transcript to the whole width; again: panes back (remembered)" },
  { keys: ["M-t"], action: "toggle-tools", scope: "global", label: "Alt-T", help: "hide or show the tool panel (remembered; also /layout)" },
  { keys: ["M-d"], action: "toggle-diff", scope: "global", label: "Alt-D", help: "hide or show the diff pane (remembered; also /layout)" },
  { keys: ["M-p"], action: "toggle-plan", scope: "global", label: "Alt-P", help: "hide or show the plan panel (remembered; also /layout)" },
  { keys: ["M-m"], action: "toggle-mouse", scope: "global", label: "Alt-M", help: "give the mouse to the terminal (select, copy, tmux copy-mode) and back" },
  { keys: ["C-z"], action: "suspend", scope: "global", label: "Ctrl-Z", help: "suspend to the shell; `fg` brings Keen back" },
  { keys: ["C-o"], action: "toggle-output", scope: "global", label: "Ctrl-O", help: "show or fold tool output and diffs in the transcript" },
  { keys: ["?"], action: "help", scope: "input", label: "?", help: "this help (on an empty prompt; also /help)" },
  { keys: ["up", "k"], action: "scroll-up", scope: "transcript", label: "Up, k", help: "transcript: scroll a line up" },
  { keys: ["down", "j"], action: "scroll-down", scope: "transcript", label: "Down, j", help: "transcript: scroll a line down" },
  { keys: ["home", "g"], action: "top", scope: "transcript", label: "Home, g", help: "transcript: to the top" },
  { keys: ["end", "S-g", "G"], action: "bottom", scope: "transcript", label: "End, G", help: "transcript: to the end (follows new output)" },
  { keys: ["enter"], action: "toggle-output", scope: "transcript", label: "Enter", help: "transcript: show or fold tool output and diffs (as Ctrl-O)" },
  { keys: ["up", "k"], action: "scroll-up", scope: "tools", label: "Up, k", help: "tools: select the previous call" },
  { keys: ["down", "j"], action: "scroll-down", scope: "tools", label: "Down, j", help: "tools: select the next call" },
  { keys: ["enter", "space"], action: "toggle-expand", scope: "tools", label: "Enter", help: "tools: show or fold the call's output" },
  { keys: ["up", "k"], action: "scroll-up", scope: "diff", label: "Up, k", help: "diff: scroll up" },
  { keys: ["down", "j"], action: "scroll-down", scope: "diff", label: "Down, j", help: "diff: scroll down" },
  { keys: ["right", "n"], action: "next-diff", scope: "diff", label: "Right, n", help: "diff: next change" },
  { keys: ["left", "p"], action: "prev-diff", scope: "diff", label: "Left, p", help: "diff: previous change" },
  { keys: ["left", "C-b"], action: "cursor-left", scope: "input", label: "", help: "" },
  { keys: ["right", "C-f"], action: "cursor-right", scope: "input", label: "", help: "" },
  { keys: ["home", "C-a"], action: "line-start", scope: "input", label: "", help: "" },
  { keys: ["end", "C-e"], action: "line-end", scope: "input", label: "", help: "" },
  { keys: ["M-b", "C-left", "M-left"], action: "word-left", scope: "input", label: "", help: "" },
  { keys: ["M-f", "C-right", "M-right"], action: "word-right", scope: "input", label: "", help: "" },
  { keys: ["backspace", "S-backspace"], action: "backspace", scope: "input", label: "", help: "" },
  { keys: ["delete"], action: "delete", scope: "input", label: "", help: "" },
  { keys: ["C-w", "M-backspace"], action: "delete-word", scope: "input", label: "", help: "" },
  { keys: ["C-u"], action: "kill-line-start", scope: "input", label: "", help: "" },
  { keys: ["C-k"], action: "kill-line-end", scope: "input", label: "", help: "" },
];

/** The action for a key in a scope: the focused pane's binding wins over a global one. */
export function lookup(key: string, scope: KeyScope): KeyAction | undefined {
  const local = KEYMAP.find((b) => b.scope === scope && b.keys.includes(key));
  if (local) return local.action;
  return KEYMAP.find((b) => b.scope === "global" && b.keys.includes(key))?.action;
}

/** The bindings help shows (editing keys are left out: they are the usual readline ones). */
export function helpBindings(): Binding[] {
  return KEYMAP.filter((b) => b.label);
}
