import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { sandboxSupport } from "../../app/sandbox/deps.js";
import { startMockLLMServer, type MockLLMServer } from "../fakes/mock-llm-server.js";
import { makeSandbox, parseLines } from "./harness.js";

// What the build's patches of the sandbox library (scripts/sandbox-patches.mjs) change for a confined
// command: one relay inside serves the HTTP and the SOCKS proxy variables alike, with the same
// allowlist; the relay wait's pause (bash only, not in POSIX mode) changes nothing a command sees.
const support = sandboxSupport();
const skip = support.ok ? false : `no sandbox on this machine: ${support.missing} (${support.install})`;

let server: MockLLMServer;
const hits = { allowed: 0, denied: 0 };
const webs: Server[] = [];
const ports = { allowed: 0, denied: 0 };
before(async () => {
  server = await startMockLLMServer();
  for (const name of ["allowed", "denied"] as const) {
    const web = createServer((_req, res) => {
      hits[name]++;
      res.end("hello\n");
    });
    await new Promise<void>((done) => web.listen(0, "127.0.0.1", done));
    ports[name] = (web.address() as AddressInfo).port;
    webs.push(web);
  }
});
after(async () => {
  await server.close();
  for (const web of webs) await new Promise((done) => web.close(done));
});

/** One `keen run --sandbox on` turn running `commands` as bash calls; their results in order. */
async function confined(commands: string[], env: Record<string, string> = {}) {
  const sb = makeSandbox(server.url, { sandbox: { network: { allowedDomains: [`127.0.0.1:${ports.allowed}`] } } });
  server.enqueue({ toolCalls: commands.map((command) => ({ name: "bash", input: { command } })) }, { text: "done" });
  const r = await sb.run(["run", "--headless", "--no-stdin", "--sandbox", "on", "go"], { env });
  assert.equal(r.code, 0, r.stderr);
  return parseLines(r.stdout).filter((l) => l.kind === "tool-result").map((l) => l.result as string);
}

// Inside, loopback is the sandbox's own and NO_PROXY names it: --noproxy '' sends it through the proxy.
const curl = (label: string, port: number, proxy = "") =>
  `curl -sS -m 20 --noproxy '' ${proxy} -o /dev/null -w '${label} %{http_code}\\n' http://127.0.0.1:${port}/`;

test("one relay inside serves HTTP and SOCKS: both proxy variables reach an allowed host, SOCKS is denied the rest", { skip }, async () => {
  hits.allowed = hits.denied = 0;
  const results = await confined([
    'echo "$HTTP_PROXY|$ALL_PROXY|$FTP_PROXY|$RSYNC_PROXY" | sed -E "s#//[^@]*@#//#g"',
    curl("http", ports.allowed),
    curl("socks", ports.allowed, '-x "$FTP_PROXY"'),
    curl("socks", ports.denied, '-x "$FTP_PROXY"'),
    // The relays run outside the seccomp helper's PID namespace, but in the command's network namespace.
    'for f in /proc/net/tcp /proc/net/tcp6; do while read -r _ at _ st _; do [ "$st" = 0A ] && echo "listening on $((16#${at##*:}))"; done < "$f"; done',
  ]);
  assert.equal(results[0], "http://localhost:3128|http://localhost:3128|socks5h://localhost:3128|localhost:3128\n");
  assert.equal(results[1], "http 200\n");
  assert.equal(results[2], "socks 200\n");
  assert.equal(hits.allowed, 2, "both went through to the allowed host");
  assert.doesNotMatch(results[3]!, /socks 200/);
  assert.equal(hits.denied, 0, "the host outside the allowlist saw nothing");
  assert.match(results[3]!, new RegExp(`deny network-outbound 127\\.0\\.0\\.1:${ports.denied}`));
  assert.equal(results[4], "listening on 3128\n", "one relay, no SOCKS relay on 1080");
});

test("a shell in POSIX mode (POSIXLY_CORRECT) waits for the relay without the pause, and reaches the allowed host", { skip }, async () => {
  hits.allowed = 0;
  const results = await confined([`case :$SHELLOPTS: in *:posix:*) echo posix;; esac; ${curl("http", ports.allowed)}`], { POSIXLY_CORRECT: "1" });
  assert.equal(results[0], "posix\nhttp 200\n");
  assert.equal(hits.allowed, 1);
});
