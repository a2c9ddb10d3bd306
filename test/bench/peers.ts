/**
 * Peer CLIs in the link bench (issue 29): each peer found on PATH is spawned
 * headless against the same mock over the same link, alternating with the
 * floor and Keen, and timed from spawn to its first streamed text delta and to
 * exit. A peer that fails gives a note (its stderr's last line), never a crash.
 *
 * Claude Code: `claude -p <prompt> --output-format stream-json --verbose
 * --include-partial-messages`; its first delta is the first `stream_event` line
 * whose event is a `content_block_delta` carrying a `text_delta`. The CLI's
 * non-essential traffic is off (CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1) and
 * it gets a fresh CLAUDE_CONFIG_DIR; any further request it makes is answered
 * by the mock's fallback reply.
 *
 * Codex: no row. `codex exec --json` reaches a custom provider only through the
 * OpenAI Responses API since `wire_api = "chat"` was removed (openai/codex#10157,
 * February 2026), and the mock speaks /v1/messages and /v1/chat/completions only.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MockLLMServer, MockStep } from "../fakes/mock-llm-server.js";
import { timeProcess, type ProcessSample } from "./measure.js";

export const CODEX_NOTE = "codex: no row even when installed, its custom providers need the OpenAI Responses API (wire_api \"chat\" was removed in 2026) and the mock speaks Messages and Chat Completions only";

/** True for Claude Code's stream-json line that carries the first text delta. */
export function isClaudeTextDelta(line: string): boolean {
  if (!line.includes('"content_block_delta"')) return false;
  try {
    const msg = JSON.parse(line);
    return msg.type === "stream_event" && msg.event?.type === "content_block_delta" && msg.event.delta?.type === "text_delta";
  } catch {
    return false;
  }
}

/** A runner for `alternate`, unscripted: it serves itself from the mock's fallback, so nothing is queued for it. */
export interface PeerRunner {
  (): Promise<ProcessSample>;
  unscripted: true;
  /** Why a run gave no figure (first failure), or undefined. */
  failure(): string | undefined;
  /** Closes its temp dirs. */
  dispose(): void;
}

/** Claude Code over the link at `url`, trusting `caFile`; every request it makes is answered with `reply`. `command`: the one on PATH (tests name another). */
export function claudeRunner(server: MockLLMServer, reply: MockStep, url: string, caFile: string, cwd: string, command = "claude"): PeerRunner {
  const config = mkdtempSync(join(tmpdir(), "keen-bench-claude-"));
  let failure: string | undefined;
  const run = async (): Promise<ProcessSample> => {
    const seen = { unexpected: server.unexpected.length, rejected: server.rejected.length };
    server.setFallback(reply);
    try {
      const sample = await timeProcess([command, "-p", "hello", "--output-format", "stream-json", "--verbose", "--include-partial-messages"], {
        cwd,
        firstLine: isClaudeTextDelta,
        env: {
          ANTHROPIC_BASE_URL: url,
          ANTHROPIC_API_KEY: "test-key",
          ANTHROPIC_AUTH_TOKEN: undefined,
          NODE_EXTRA_CA_CERTS: caFile,
          CLAUDE_CONFIG_DIR: config,
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        },
      });
      if (sample.firstMs === undefined) failure ??= "exited 0 without a streamed text delta";
      return sample;
    } catch (err) {
      failure ??= lastLine(String(err instanceof Error ? err.message : err));
      return { wallMs: Number.NaN, latencies: [] };
    } finally {
      server.setFallback(undefined);
      // What the peer asked for beyond the Messages API is its own business, not a broken measurement.
      const extra = [...server.unexpected.splice(seen.unexpected), ...server.rejected.splice(seen.rejected).map((r) => `${r.path}: ${r.message}`)];
      if (extra.length) failure ??= `the mock could not answer: ${extra[0]}`;
    }
  };
  return Object.assign(run, {
    unscripted: true as const,
    failure: () => failure,
    dispose: () => rmSync(config, { recursive: true, force: true }),
  });
}

function lastLine(text: string): string {
  return text.trim().split("\n").filter(Boolean).at(-1) ?? "no output";
}
