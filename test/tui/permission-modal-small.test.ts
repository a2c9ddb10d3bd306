import { test } from "node:test";
import assert from "node:assert/strict";
import { loadTheme } from "../../themes/index.js";
import { permissionModal } from "../../app/tui/views/permission.js";
import { plain, viewOfCall } from "./helpers.js";

const theme = loadTheme("dark", {});
const diff = "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1,3 @@\n+line1\n+line2\n+line3\n";
const req = { request_id: "r", tool_name: "write_file", tool_call_id: "t", input: "{}", diff, path: "new.txt", ...viewOfCall("write_file", { path: "new.txt" }) };

test("permission modal with room for one body row: that row shows the change (Up/Down scroll it), not a counter saying lines 1-0", () => {
  // 22 cells wide, 4 rows: the question, one row, the keys on two rows (a tiny tmux pane).
  const { lines } = permissionModal(req, { scroll: 0 }, 22, 4, theme, "/w", 1);
  const shown = plain(lines);
  assert.equal(shown.length, 4);
  assert.equal(shown[0], "Write new.txt?");
  assert.match(shown[1]!, /1 \+ line1/);
  assert.ok(!shown.some((l) => /lines \d+-\d+ of/.test(l)), shown.join("\n"));
  assert.match(plain(permissionModal(req, { scroll: 2 }, 22, 4, theme, "/w", 1).lines)[1]!, /3 \+ line3/);
});

test("permission modal with two rows or more for the body keeps its counter", () => {
  const shown = plain(permissionModal(req, { scroll: 0 }, 22, 5, theme, "/w", 1).lines);
  assert.match(shown[1]!, /1 \+ line1/);
  assert.match(shown[2]!, /^lines 1-1 of 3, PgDn for more/);
});
