import type { TuiController } from "./controller.js";
import type { InputEvent } from "./keys.js";

/*
 * Keys while Ctrl-R searches the history, as in bash and zsh: typing
 * narrows, Ctrl-R goes to the next older match, Enter or Right accepts the
 * match into the input (Enter does not send it), Esc or Ctrl-G cancels and
 * puts back what was typed. Any other key accepts and then acts as usual.
 * Returns true when the key was used here.
 */
export function searchInput(c: TuiController, ev: InputEvent, key: string | undefined): boolean {
  const e = c.editor;
  if (ev.type === "text" || ev.type === "paste") e.searchType(ev.text.replace(/\n/g, " "));
  else if (key === "C-r") e.searchHistory();
  else if (key === "backspace" || key === "S-backspace") e.searchBackspace();
  else if (key === "enter" || key === "right") e.acceptSearch();
  else if (key === "escape" || key === "C-g" || key === "C-c") e.cancelSearch();
  else {
    e.acceptSearch();
    return false;
  }
  c.deps.requestFrame(true);
  return true;
}
