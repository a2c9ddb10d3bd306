import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");
const read = (file: string) => JSON.parse(readFileSync(resolve(ROOT, file), "utf8"));

test("every dependency is pinned to the exact version the lock installs, so npm install leaves package-lock.json as committed", () => {
  const pkg = read("package.json");
  const lock = read("package-lock.json");
  for (const kind of ["dependencies", "devDependencies"]) {
    for (const [name, range] of Object.entries<string>(pkg[kind])) {
      assert.equal(range, lock.packages[`node_modules/${name}`].version, `${name} in ${kind}`);
      assert.equal(lock.packages[""][kind][name], range, `the lock's root entry for ${name}`);
    }
  }
});
