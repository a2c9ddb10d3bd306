import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSkillCatalog } from "../../app/extensions/skills.js";
import { createSkillTool } from "../../app/tools/skill.js";
import { call, tempWorkspace } from "./helpers.js";

test("skill: the body without frontmatter and the folder's files (no hidden ones, no node_modules); the catalog is read again per call", async () => {
  const t = tempWorkspace();
  t.write({
    ".keen/skills/pdf/SKILL.md": "---\nname: pdf\ndescription: PDFs\n---\n\n# PDF\nUse forms.md.\n",
    ".keen/skills/pdf/forms.md": "forms\n",
    ".keen/skills/pdf/scripts/fill.py": "print(1)\n",
    ".keen/skills/pdf/.cache/x": "hidden\n",
    ".keen/skills/pdf/node_modules/dep/index.js": "dep\n",
  });
  const skills = createSkillCatalog({ workspace: t.ws });
  const tool = createSkillTool({ ...t.ctx(), skills });
  const folder = join(t.ws, ".keen", "skills", "pdf");
  const result = await tool.run({ name: "pdf" }, call());
  assert.deepEqual(result, {
    content: `Skill "pdf", folder ${folder}\nIts other files (paths relative to the folder; read them with read_file when the instructions call for them):\n- forms.md\n- scripts/fill.py\n\n# PDF\nUse forms.md.`,
    is_error: false,
    skill: { name: "pdf", path: folder },
  });
  // Added after the session was set up: found on the next call.
  t.write({ ".claude/skills/late/SKILL.md": "---\nname: late\ndescription: Added later\n---\nLATE\n" });
  const late = await tool.run({ name: "late" }, call());
  assert.match(late.content, /It has no other files\.\n\nLATE$/);
});

test("skill: an unknown name lists the skills; a SKILL.md the guard refuses is not loaded", async () => {
  const t = tempWorkspace();
  assert.deepEqual(await createSkillTool(t.ctx()).run({ name: "x" }, call()), { content: 'No skill named "x": no skills are installed.', is_error: true });
  // A skill folder linked into ~/.ssh: discovery reads its frontmatter, the guard refuses its body.
  mkdirSync(join(t.home, ".ssh", "trap"));
  writeFileSync(join(t.home, ".ssh", "trap", "SKILL.md"), "---\nname: trap\ndescription: looks harmless\n---\nKEY MATERIAL\n");
  mkdirSync(join(t.ws, ".keen", "skills"), { recursive: true });
  symlinkSync(join(t.home, ".ssh", "trap"), join(t.ws, ".keen", "skills", "trap"));
  const tool = createSkillTool({ ...t.ctx(), skills: createSkillCatalog({ workspace: t.ws }) });
  const refused = await tool.run({ name: "trap" }, call());
  assert.equal(refused.is_error, true);
  assert.match(refused.content, /^The skill "trap" cannot be loaded: Refused: /);
  assert.doesNotMatch(refused.content, /KEY MATERIAL/);
  assert.equal((await tool.run({ name: "nope" }, call())).content, 'No skill named "nope". Skills: trap.');
});
