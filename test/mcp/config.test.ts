import { test } from "node:test";
import assert from "node:assert/strict";
import { expandServer, mcpFileSchema, referencedVariables, type ExpansionRules } from "../../app/mcp/config.js";
import { checkToolNames, toolFilter } from "../../app/cli/run-flags.js";
import { gate } from "../../app/permissions/policy.js";
import { isSecretEnvName } from "../../app/tools/index.js";

const rules = (extra: Partial<ExpansionRules> = {}): ExpansionRules => ({
  env: { HOME: "/home/u", GITHUB_TOKEN: "ghp_x", ANTHROPIC_API_KEY: "sk-ant", EMPTY: "" }, forbidden: new Set(), isSecretName: isSecretEnvName, ...extra,
});

test("${VAR} expands in command, args, env, cwd, url and headers; defaults; an unset variable is an error", () => {
  assert.deepEqual(expandServer({ command: "${HOME}/bin/s", args: ["--dir=${HOME}", "${EMPTY:-x}"], env: { A: "${HOME}" }, cwd: "${HOME}" }, rules()), {
    config: { command: "/home/u/bin/s", args: ["--dir=/home/u", "x"], env: { A: "/home/u" }, cwd: "/home/u" },
  });
  assert.deepEqual(expandServer({ type: "http", url: "https://h/${HOME}", headers: { X: "t ${GITHUB_TOKEN}" } }, rules()), {
    config: { type: "http", url: "https://h//home/u", headers: { X: "t ghp_x" } },
  });
  assert.deepEqual(expandServer({ command: "s", args: ["${NOPE}"] }, rules()), { error: "${NOPE} is not set" });
  assert.deepEqual(expandServer({ command: "s", args: ["$HOME", "${1}"] }, rules()), { config: { command: "s", args: ["$HOME", "${1}"], env: undefined, cwd: undefined } });
});

test("a project's rules: provider keys never, secret-looking names only when allowed", () => {
  const project = rules({ forbidden: new Set(["ANTHROPIC_API_KEY"]), secretAllowed: new Set(["GITHUB_TOKEN"]) });
  assert.deepEqual(expandServer({ command: "s", env: { K: "${ANTHROPIC_API_KEY}" } }, project), {
    error: "${ANTHROPIC_API_KEY} is a provider key and is never given to a project's MCP server",
  });
  assert.deepEqual(expandServer({ command: "s", env: { K: "${GITHUB_TOKEN}" } }, project), { config: { command: "s", args: undefined, env: { K: "ghp_x" }, cwd: undefined } });
  assert.match(JSON.stringify(expandServer({ command: "s", env: { K: "${GITHUB_TOKEN}" } }, rules({ secretAllowed: new Set() }))), /looks secret; allow it with `keen mcp trust --allow-env GITHUB_TOKEN`/);
  assert.deepEqual(referencedVariables({ command: "${A}", args: ["${B:-x}", "${A}"] }), ["A", "B"]);
});

test("the file format: stdio or http servers, unknown fields of other tools ignored, bad names refused", () => {
  const parsed = mcpFileSchema().parse({ mcpServers: { a: { command: "x", disabled: false, alwaysAllow: [] }, b: { url: "http://h" } } });
  assert.deepEqual(parsed.mcpServers, { a: { command: "x" }, b: { url: "http://h" } });
  const bad = mcpFileSchema().safeParse({ mcpServers: { "a b": { command: "x" } } });
  assert.equal(bad.success, false);
  assert.deepEqual(bad.error!.issues.map((i) => [i.path.join("."), i.message]), [["mcpServers.a b", "server names use letters, digits, _ and - (at most 40)"]]);
});

test("allow and deny lists: exact names and * patterns; unknown mcp__ entries are told apart", () => {
  const allowed = toolFilter(["read_file", "mcp__gh__*"], ["mcp__gh__delete"]);
  assert.deepEqual(["read_file", "bash", "mcp__gh__list", "mcp__gh__delete", "mcp__other__x"].filter(allowed), ["read_file", "mcp__gh__list"]);
  assert.deepEqual(checkToolNames(["read_file", "mcp__gh__list"], ["read_file", "nope", "mcp__gh__*", "mcp__x__*"], ["mcp__gh__gone"]), {
    unknown: ["nope"], mcpUnknown: ["mcp__x__*", "mcp__gh__gone"],
  });
});

test("the permission gate takes an MCP tool's kind: read with readOnlyHint, else other (asked about)", () => {
  assert.equal(gate("read-only", undefined, { kind: "read" }), "allow");
  assert.equal(gate("read-only", undefined, { kind: "other" }), "refuse");
  assert.equal(gate("ask", undefined), "ask", "a tool that declares no kind is the riskiest");
  assert.equal(gate("accept-edits", undefined, { kind: "other", bashConfined: true }), "ask");
  assert.equal(gate("ask", "allow", { kind: "other" }), "allow");
  assert.equal(gate("auto", undefined, { kind: "other" }), "allow");
});
