import { test } from "node:test";
import assert from "node:assert/strict";
import { commandsFor } from "../../app/cli/main.js";

// app/cli/main.ts declares only the command a start names (every spawn pays for building commander's tree).
const ALL = ["", "run", "stdio", "acp", "sessions", "mcp", "trust", "untrust", "protocol"];
const declared = (argv: string[]) => ALL.filter(commandsFor(argv));

test("a command named first is declared alone; --version alone declares none", () => {
  assert.deepEqual(declared(["run", "--sandbox", "off", "hi"]), ["run"]);
  assert.deepEqual(declared(["sessions", "list"]), ["sessions"]);
  assert.deepEqual(declared(["--version"]), []);
  assert.deepEqual(declared(["-V"]), []);
});

test("anything else declares every command: help, the TUI's options, an unknown word, --version with more", () => {
  for (const argv of [[], ["--help"], ["help", "run"], ["--cwd", "/tmp"], ["bogus"], ["--version", "run"], ["-r", "abc"]]) {
    assert.deepEqual(declared(argv), ALL, argv.join(" "));
  }
});
