import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { discoverSkills, readSkill, skillsSection, type SkillInfo } from "../../app/extensions/skills.js";
import { createFileGuard } from "../../app/permissions/file-guard.js";
import { makeTempDir } from "../temp.js";

function write(path: string, text: string): void {
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, text);
}

const skillMd = (name: string, description: string, body = "body") => `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;

function layout() {
  const root = realpathSync(makeTempDir("keen-skills-"));
  const dirs = { root, home: join(root, "home"), config: join(root, "config"), workspace: join(root, "ws") };
  for (const d of [dirs.home, dirs.config, dirs.workspace]) mkdirSync(d, { recursive: true });
  return dirs;
}

test("SKILL.md frontmatter: name and description required, names as the Agent Skills spec has them", () => {
  const { root } = layout();
  const cases: [string, string, string | undefined][] = [
    ["ok", skillMd("pdf-tools", "Fill PDF forms.\n  Use for PDFs."), undefined],
    ["noname", "---\ndescription: x\n---\n", "SKILL.md's frontmatter has no name"],
    ["nodesc", "---\nname: nodesc\n---\n", "SKILL.md's frontmatter has no description (the model chooses a skill by it)"],
    ["upper", skillMd("PDF", "x"), 'the name "PDF" is not a skill name (lowercase letters, digits and single hyphens, at most 64 characters)'],
    ["double", skillMd("a--b", "x"), 'the name "a--b" is not a skill name (lowercase letters, digits and single hyphens, at most 64 characters)'],
    ["long", skillMd("a".repeat(65), "x"), `the name "${"a".repeat(65)}" is not a skill name (lowercase letters, digits and single hyphens, at most 64 characters)`],
    ["bigdesc", skillMd("bigdesc", "x".repeat(1025)), "the description is longer than 1024 characters"],
    ["badyaml", "---\nname: [unclosed\n---\n", undefined],
    ["nofront", "# Just markdown\n", "SKILL.md's frontmatter has no name"],
  ];
  for (const [folder, text, reason] of cases) {
    write(join(root, folder, "SKILL.md"), text);
    const got = readSkill(join(root, folder), "project");
    if (folder === "ok") assert.deepEqual(got, { name: "pdf-tools", description: "Fill PDF forms. Use for PDFs.", path: join(root, folder), source: "project" });
    else if (folder === "badyaml") assert.match((got as { reason: string }).reason, /^SKILL\.md's frontmatter is not valid YAML/);
    else assert.deepEqual(got, { path: join(root, folder), source: "project", reason }, folder);
  }
  mkdirSync(join(root, "empty"));
  assert.equal(readSkill(join(root, "empty"), "user"), undefined, "a folder without SKILL.md is no skill");
});

test("discovery: project over user, .keen over .claude over .agents, a clash within one directory skipped, hidden folders and loose files ignored", () => {
  const d = layout();
  write(join(d.home, ".claude", "skills", "shared", "SKILL.md"), skillMd("shared", "from ~/.claude"));
  write(join(d.home, ".agents", "skills", "mine", "SKILL.md"), skillMd("mine", "from ~/.agents"));
  write(join(d.config, "skills", "shared", "SKILL.md"), skillMd("shared", "from config"));
  write(join(d.config, "skills", "only-user", "SKILL.md"), skillMd("only-user", "user only"));
  write(join(d.workspace, ".agents", "skills", "shared", "SKILL.md"), skillMd("shared", "from .agents"));
  write(join(d.workspace, ".claude", "skills", "shared", "SKILL.md"), skillMd("shared", "from .claude"));
  write(join(d.workspace, ".keen", "skills", "shared", "SKILL.md"), skillMd("shared", "from .keen"));
  write(join(d.workspace, ".keen", "skills", "twin", "SKILL.md"), skillMd("shared", "same name, same directory"));
  write(join(d.workspace, ".keen", "skills", ".hidden", "SKILL.md"), skillMd("hidden", "never"));
  write(join(d.workspace, ".keen", "skills", "README.md"), "not a skill\n");
  const found = discoverSkills({ configDir: d.config, workspace: d.workspace, home: d.home });
  assert.deepEqual(found.skills.map((s) => [s.name, s.description, s.source]), [
    ["mine", "from ~/.agents", "user"],
    ["only-user", "user only", "user"],
    ["shared", "from .keen", "project"],
  ]);
  assert.deepEqual(found.skipped, [{
    path: join(d.workspace, ".keen", "skills", "twin"), source: "project",
    reason: `the name "shared" is already used by ${join(d.workspace, ".keen", "skills", "shared")}`,
  }]);
});

test("the guard reads inside skill folders of Keen's config directory and ~/.claude, and nothing else there; never writes", () => {
  const d = layout();
  write(join(d.config, "skills", "pdf", "SKILL.md"), skillMd("pdf", "PDFs"));
  write(join(d.config, "skills", "pdf", "ref.md"), "ref\n");
  write(join(d.config, "skills", "pdf", "local.env"), "TOKEN=1\n");
  write(join(d.config, "config.json"), "{}\n");
  write(join(d.home, ".claude", "skills", "review", "SKILL.md"), skillMd("review", "Reviews"));
  write(join(d.home, ".claude", ".credentials.json"), "{}\n");
  // A "skill" that is a symlink to the config directory itself opens nothing.
  mkdirSync(join(d.home, ".agents", "skills"), { recursive: true });
  write(join(d.root, "elsewhere", "SKILL.md"), skillMd("elsewhere", "linked"));
  symlinkSync(d.config, join(d.home, ".agents", "skills", "sneaky"));
  write(join(d.config, "SKILL.md"), skillMd("sneaky", "the config dir pretending"));
  const found = discoverSkills({ configDir: d.config, workspace: d.workspace, home: d.home });
  assert.deepEqual(found.readable.sort(), [join(d.config, "skills", "pdf"), join(d.home, ".claude", "skills", "review")]);
  const guard = createFileGuard({ workspace: d.workspace, home: d.home, protectedPaths: [d.config], readableDirs: () => found.readable });
  assert.equal(guard.checkRead(join(d.config, "skills", "pdf", "ref.md")).ok, true);
  assert.equal(guard.checkRead(join(d.home, ".claude", "skills", "review", "SKILL.md")).ok, true);
  assert.equal(guard.checkRead(join(d.home, ".agents", "skills", "sneaky", "config.json")).ok, false, "through the symlinked folder");
  assert.equal(guard.checkRead(join(d.config, "config.json")).ok, false);
  assert.equal(guard.checkRead(join(d.home, ".claude", ".credentials.json")).ok, false);
  assert.equal(guard.checkRead(join(d.config, "skills", "pdf", "local.env")).ok, false, "the secret-name rules hold inside");
  assert.equal(guard.checkWrite(join(d.config, "skills", "pdf", "ref.md")).ok, false, "read-only");
  // Without the skill folders, the same read is refused.
  const plain = createFileGuard({ workspace: d.workspace, home: d.home, protectedPaths: [d.config] });
  assert.equal(plain.checkRead(join(d.config, "skills", "pdf", "ref.md")).ok, false);
});

test("the prompt section names each skill with its description and folder, within the budget", () => {
  const skills: SkillInfo[] = ["a", "b", "c"].map((n) => ({ name: n, description: `does ${n}`, path: `/s/${n}`, source: "user" }));
  const section = skillsSection(skills)!;
  assert.match(section, /^Skills: /);
  assert.ok(section.includes("- a: does a (/s/a)\n- b: does b (/s/b)\n- c: does c (/s/c)"));
  const cut = skillsSection(skills, 40)!;
  assert.ok(cut.includes("- a: does a (/s/a)\n- b: does b (/s/b)\n[1 more skills left out"), cut);
  assert.equal(skillsSection([]), undefined);
  const long = skillsSection([{ name: "x", description: "y".repeat(1000), path: "/x", source: "user" }])!;
  assert.ok(long.includes(`- x: ${"y".repeat(299)}… (/x)`));
});

test("a SKILL.md reached through a symlink is read only where the guard lets read_file read: a repository cannot list a protected file as a skill", () => {
  const d = layout();
  write(join(d.home, ".ssh", "keys", "SKILL.md"), skillMd("keys", "KEY-DESCRIPTION"));
  write(join(d.root, "shared", "ok", "SKILL.md"), skillMd("ok", "shared elsewhere"));
  mkdirSync(join(d.workspace, ".claude", "skills"), { recursive: true });
  symlinkSync(join(d.home, ".ssh", "keys"), join(d.workspace, ".claude", "skills", "keys"));
  symlinkSync(join(d.root, "shared", "ok"), join(d.workspace, ".claude", "skills", "ok"));
  const guard = createFileGuard({ workspace: d.workspace, home: d.home });
  const asked: string[] = [];
  const found = discoverSkills({
    workspace: d.workspace, home: d.home,
    canRead: (path) => {
      asked.push(path);
      const decision = guard.checkRead(path);
      return decision.ok ? undefined : decision.reason;
    },
  });
  assert.deepEqual(found.skills.map((s) => [s.name, s.description]), [["ok", "shared elsewhere"]]);
  assert.equal(found.skipped.length, 1);
  assert.equal(found.skipped[0]!.path, join(d.workspace, ".claude", "skills", "keys"));
  assert.match(found.skipped[0]!.reason, /^Refused: .*credential/);
  assert.doesNotMatch(JSON.stringify(found), /KEY-DESCRIPTION/);
  assert.deepEqual(found.readable, [], "linked folders get no read exception");
  assert.deepEqual(asked.sort(), [join(d.workspace, ".claude", "skills", "keys", "SKILL.md"), join(d.workspace, ".claude", "skills", "ok", "SKILL.md")]);
});
