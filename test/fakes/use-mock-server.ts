import { after, before, beforeEach } from "node:test";
import { startMockLLMServer, type MockLLMServer, type MockLLMServerOptions } from "./mock-llm-server.js";

/**
 * The mock LLM server of one test file: started before its tests, reset
 * before each test (scripted replies and recorded requests), closed after.
 * The value returned forwards to the running server, which exists only once
 * the file's `before` hooks ran: use it inside tests and hooks.
 */
export function useMockLLMServer(options?: MockLLMServerOptions): MockLLMServer {
  let server: MockLLMServer | undefined;
  before(async () => {
    server = await startMockLLMServer(options);
  });
  after(() => server?.close());
  // In a unit shard many files share one process and their top-level hooks are the root's: another
  // file's test can come before this file's before() (Node 22), with nothing to reset yet.
  beforeEach(() => server?.reset());
  return new Proxy({} as MockLLMServer, {
    get(_target, key) {
      if (!server) throw new Error("the mock LLM server was used before its before() hook ran");
      const value = Reflect.get(server, key);
      return typeof value === "function" ? value.bind(server) : value;
    },
  });
}
