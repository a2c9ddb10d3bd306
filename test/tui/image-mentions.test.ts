import { test } from "node:test";
import assert from "node:assert/strict";
import { homedir } from "node:os";
import { TuiController } from "../../app/tui/controller.js";
import { imageMentions, pastedImageMention } from "../../app/tui/image-mentions.js";
import { handleInput } from "../../app/tui/input-actions.js";
import { loadTheme } from "../../themes/index.js";
import { FakeEngine } from "../fakes/fake-engine.js";

/* `@image.png` in a TUI prompt sends the file as an image; a pasted image path becomes such a mention. */

test("@ mentions of image files become the prompt's images, in order, once each; other mentions stay text", () => {
  assert.deepEqual(imageMentions("compare @shots/a.png and @b.JPG, then @src/app.ts and @shots/a.png."), [{ path: "shots/a.png" }, { path: "b.JPG" }]);
  assert.deepEqual(imageMentions('see @"my shots/Screen Shot.webp" and email@example.png'), [{ path: "my shots/Screen Shot.webp" }]);
  assert.deepEqual(imageMentions("@~/Desktop/x.gif"), [{ path: `${homedir()}/Desktop/x.gif` }]);
  assert.deepEqual(imageMentions("nothing here.png"), []);
});

test("a paste that is only an image's path (quoted, escaped or a file URL) becomes a mention; anything else is pasted as is", () => {
  assert.equal(pastedImageMention("/tmp/shot.png"), "@/tmp/shot.png ");
  assert.equal(pastedImageMention("'/Users/me/Screen Shot 1.png'\n"), '@"/Users/me/Screen Shot 1.png" ');
  assert.equal(pastedImageMention("/Users/me/Screen\\ Shot\\ 2.jpeg"), '@"/Users/me/Screen Shot 2.jpeg" ');
  assert.equal(pastedImageMention("file:///home/me/a%20b.webp"), '@"/home/me/a b.webp" ');
  assert.equal(pastedImageMention("./docs/diagram.gif"), "@./docs/diagram.gif ");
  assert.equal(pastedImageMention("the logo is logo.png"), undefined);
  assert.equal(pastedImageMention("/tmp/notes.txt"), undefined);
  assert.equal(pastedImageMention("/tmp/a.png\n/tmp/b.png"), undefined);
});

test("the TUI sends a pasted image path and the prompt's @ mentions with the prompt command", () => {
  const engine = new FakeEngine();
  const c = new TuiController({
    client: engine, theme: loadTheme("dark", {}), initial: { cwd: "/work/proj", model: "m/x", permissionMode: "ask" },
    requestFrame: () => {}, redraw: () => {}, exit: () => {},
  });
  engine.subscribe((event) => c.onEvent(event));
  c.editor.insert("what is wrong in ");
  handleInput(c, { type: "paste", text: "'/tmp/my shot.png'" }, undefined);
  c.editor.insert("and @ui/logo.png?");
  assert.equal(c.editor.value(), 'what is wrong in @"/tmp/my shot.png" and @ui/logo.png?');
  c.prompt(c.editor.value());
  const [sent] = engine.commands("prompt");
  assert.deepEqual(sent && { text: sent.text, images: sent.images }, {
    text: 'what is wrong in @"/tmp/my shot.png" and @ui/logo.png?', images: [{ path: "/tmp/my shot.png" }, { path: "ui/logo.png" }],
  });
});
