import type { KeenEvent } from "../../protocol/events.js";

/*
 * Terminal notifications: when a turn ends or a permission request waits,
 * Keen rings the bell or sends a desktop notification (OSC 9 or OSC 777), so
 * someone in another window or tmux window knows. By default only while the
 * terminal reports that it is not focused (mode 1004; tmux forwards these
 * reports with `set -g focus-events on`). A terminal that never reports focus
 * counts as focused: "unfocused" then never fires, "always" does.
 */

/** When to notify (config `tui.notify`). */
export type NotifyWhen = "unfocused" | "always" | "never";
/** How (config `tui.notifyWith`): the bell, OSC 9 (iTerm2, kitty, WezTerm, …) or OSC 777 (VTE terminals, foot, …). */
export type NotifyWith = "bell" | "osc9" | "osc777";

export interface NotifySettings {
  when?: NotifyWhen;
  with?: NotifyWith;
}

/** Anything that could end the sequence or drive the terminal is dropped from a notification's text. */
function clean(text: string): string {
  return text.replace(/[\x00-\x1f\x7f-\x9f]/g, " ").slice(0, 200);
}

/**
 * The bytes of one notification. Inside tmux (`$TMUX` set) an OSC is wrapped
 * in tmux's passthrough (ESC P tmux; … ESC \, inner ESCs doubled), which tmux
 * forwards to the outer terminal with `set -g allow-passthrough on`; the bell
 * is never wrapped: tmux shows it itself (the window's bell flag, `bell-action`).
 */
export function notification(method: NotifyWith, title: string, body: string, inTmux: boolean): string {
  if (method === "bell") return "\x07";
  const osc = method === "osc9" ? `\x1b]9;${clean(`${title}: ${body}`)}\x07` : `\x1b]777;notify;${clean(title).replace(/;/g, ",")};${clean(body)}\x07`;
  return inTmux ? `\x1bPtmux;${osc.replace(/\x1b/g, "\x1b\x1b")}\x1b\\` : osc;
}

/** Watches the event stream and the focus reports; writes a notification when one is due. */
export class Notifier {
  /** Unknown until the terminal first reports: treated as focused. */
  private focused = true;

  constructor(private settings: NotifySettings, private write: (bytes: string) => void, private inTmux: boolean) {}

  setFocused(focused: boolean): void {
    this.focused = focused;
  }

  onEvent(event: KeenEvent): void {
    if ("replay" in event && event.replay) return;
    if (event.kind === "result") this.notify(event.status === "success" ? "turn finished" : `turn ended: ${event.status}`);
    else if (event.kind === "permission-request") this.notify(`waiting for your answer: ${event.tool_name}`);
  }

  private notify(body: string): void {
    const when = this.settings.when ?? "unfocused";
    if (when === "never" || (when === "unfocused" && this.focused)) return;
    try {
      this.write(notification(this.settings.with ?? "bell", "Keen", body, this.inTmux));
    } catch {
      // closed terminal
    }
  }
}
