import assert from "node:assert/strict";
import { test } from "node:test";
import { createAutoApproveRequester } from "../../app/permissions/requester.js";

test("auto-approve allows everything, dangerous bash included", async () => {
  const requester = createAutoApproveRequester();
  assert.equal(await requester.request({ tool: "bash", input: { command: "rm -rf build" }, summary: "rm -rf build" }), "allow");
  assert.equal(await requester.request({ tool: "write_file", input: {}, summary: "write" }), "allow");
});
