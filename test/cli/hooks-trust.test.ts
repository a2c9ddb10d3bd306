import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { useMockLLMServer } from "../fakes/use-mock-server.js";
import { makeInProcessSandbox } from "./in-process.js";

// `keen trust` and `keen untrust` for project hooks, in this process (test/cli/in-process.ts): they
// read and write the user config and start nothing. test/e2e/hooks.test.ts spawns `keen trust` and
// the runs it changes (a trusted hook runs, a changed script revokes the trust).

// No turn runs here; the sandbox wants a server for its env.
const server = useMockLLMServer();

test("keen untrust takes back the hooks' trust; keen trust with nothing to trust is a one-line usage error", async () => {
  const sb = makeInProcessSandbox(server);
  mkdirSync(join(sb.workspace, ".claude", "hooks"), { recursive: true });
  writeFileSync(join(sb.workspace, ".claude", "hooks", "log.sh"), "#!/bin/sh\ncat > /dev/null\n");
  writeFileSync(join(sb.workspace, ".claude", "settings.json"), JSON.stringify({
    hooks: { PreToolUse: [{ matcher: "Bash", hooks: [{ type: "command", command: 'sh "$CLAUDE_PROJECT_DIR"/.claude/hooks/log.sh' }] }] },
  }));
  const hooksTrust = () => JSON.parse(readFileSync(join(sb.home, "config.json"), "utf8")).hooksTrust;

  const trust = await sb.keen(["trust"]);
  assert.equal(trust.code, 0, trust.stderr);
  assert.match(trust.stdout, /Trusted the hooks of .*\n {2}PreToolUse \[Bash\]: sh "\$CLAUDE_PROJECT_DIR"\/\.claude\/hooks\/log\.sh {2}\(\.claude\/settings\.json\)/);
  assert.equal(typeof hooksTrust()?.[sb.workspace]?.sha256, "string");

  const untrust = await sb.keen(["untrust"]);
  assert.equal(untrust.code, 0, untrust.stderr);
  assert.equal(untrust.stdout, `${sb.workspace}: project hooks no longer trusted.\n`);
  assert.equal(hooksTrust(), undefined);

  const empty = join(sb.root, "empty");
  mkdirSync(empty);
  const nothing = await sb.keen(["trust"], { cwd: empty });
  assert.deepEqual([nothing.code, nothing.stdout, nothing.stderr.trim().split("\n").length], [2, "", 1]);
  assert.match(nothing.stderr, /nothing to trust in .*: no \.mcp\.json and no project hooks/);
});
