import { test } from "node:test";
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { makeTempDir } from "../temp.js";
import { loadTheme, THEME_NAMES, ThemeError } from "../../themes/index.js";
import { TOKEN_NAMES } from "../../themes/tokens.js";

test("built-in themes define every token; NO_COLOR keeps only bold, underline and inverse", () => {
  assert.deepEqual(THEME_NAMES, ["dark", "light", "high-contrast"]);
  for (const name of THEME_NAMES) {
    const theme = loadTheme(name, {});
    assert.deepEqual(Object.keys(theme.tokens).sort(), [...TOKEN_NAMES].sort(), name);
    const mono = loadTheme(name, { NO_COLOR: "1" });
    assert.equal(mono.mono, true);
    for (const style of Object.values(mono.tokens)) assert.ok(style.fg === undefined && style.bg === undefined);
    assert.deepEqual(mono.tokens.status, { inverse: true });
  }
  assert.equal(loadTheme(undefined, { NO_COLOR: "" }).mono, false, "an empty NO_COLOR is unset (no-color.org)");
});

test("a theme file overrides tokens of its base; unknown names and tokens are errors that say what exists", () => {
  const dir = makeTempDir("keen-theme-");
  const file = join(dir, "mine.json");
  writeFileSync(file, JSON.stringify({ name: "mine", base: "light", tokens: { error: { fg: "#ff0000", bold: true } } }));
  const theme = loadTheme(file, {});
  assert.equal(theme.name, "mine");
  assert.deepEqual(theme.tokens.error, { fg: "#ff0000", bold: true });
  assert.deepEqual(theme.tokens.accent, loadTheme("light", {}).tokens.accent);
  assert.throws(() => loadTheme("solarized", {}), (e: Error) => e instanceof ThemeError && /built-in themes: dark, light, high-contrast/.test(e.message));
  writeFileSync(file, JSON.stringify({ tokens: { errror: {} } }));
  assert.throws(() => loadTheme(file, {}), /unknown token "errror"/);
});
