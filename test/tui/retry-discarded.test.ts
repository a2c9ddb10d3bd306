import { test } from "node:test";
import assert from "node:assert/strict";
import { draft as d } from "../fakes/fake-engine.js";
import { loadTheme } from "../../themes/index.js";
import { TranscriptCache, transcriptWindow } from "../../app/tui/views/transcript.js";
import { FOLLOW } from "../../app/tui/views/window.js";
import { plain, viewOf } from "./helpers.js";

const theme = loadTheme("dark", {});

// Found under tmux with the mock's in-stream overloaded error: the transcript said
// "(discarded: the connection failed …)" whatever had failed, and the reason was shown nowhere.
test("a partial answer a retry discarded says why the step is retried, in the retry's own words", () => {
  const view = viewOf([d.user("q"), d.delta("partial words"), d.retry(2, 3000, "overloaded_error: Overloaded")]);
  const lines = plain(transcriptWindow(view, { theme, width: 80, now: 0, thinkingExpanded: false }, new TranscriptCache(), FOLLOW, 20).lines);
  assert.ok(lines.includes("partial words"), lines.join("\n"));
  assert.ok(lines.includes("(discarded: overloaded_error: Overloaded; the step is retried)"), lines.join("\n"));
  assert.ok(!lines.some((l) => l.includes("connection failed")), lines.join("\n"));
});
