import assert from "node:assert/strict";
import { test } from "node:test";
import { ImageError, MAX_IMAGE_EDGE, prepareImage } from "../../app/tools/image.js";
import { makePng, pngSize } from "../fakes/png.js";

test("an image within the caps is sent as it is", async () => {
  const png = makePng(30, 20);
  const image = await prepareImage(png, "small.png");
  assert.deepEqual({ ...image, data: Buffer.from(image.data, "base64").equals(png) }, { media_type: "image/png", data: true, width: 30, height: 20, bytes: png.length });
});

test("an image over the pixel cap is downscaled (jimp) to the cap on its longest side, keeping its aspect", async () => {
  const png = makePng(MAX_IMAGE_EDGE * 2, 40);
  const image = await prepareImage(png, "wide.png");
  const out = Buffer.from(image.data, "base64");
  assert.deepEqual(pngSize(out), { width: MAX_IMAGE_EDGE, height: 20 });
  assert.deepEqual([image.media_type, image.width, image.height, image.bytes], ["image/png", MAX_IMAGE_EDGE, 20, out.length]);
  assert.deepEqual(image.resized_from, { width: MAX_IMAGE_EDGE * 2, height: 40, bytes: png.length });
});

test("what is not a png, jpeg, gif or webp image, or is not the type declared, is refused with a reason", async () => {
  await assert.rejects(prepareImage(Buffer.from("just text, not an image"), "notes.png"), (e: unknown) => e instanceof ImageError && /notes\.png is not an image Keen can send/.test(e.message) && e.code === "bad_image");
  await assert.rejects(prepareImage(makePng(4, 4), "image 1", "image/jpeg"), /image 1 is declared image\/jpeg but its bytes are image\/png/);
  const bmp = Buffer.alloc(58);
  bmp.write("BM", 0, "latin1");
  bmp.writeUInt32LE(58, 2);
  bmp.writeUInt32LE(40, 14);
  bmp.writeInt32LE(2, 18);
  bmp.writeInt32LE(2, 22);
  await assert.rejects(prepareImage(bmp, "old.bmp"), /old\.bmp is a bmp image; Keen sends png, jpeg, gif and webp/);
});

test("an image with more pixels than Keen decodes is refused before decoding", async () => {
  const header = makePng(1, 1);
  header.writeUInt32BE(20_000, 16);
  header.writeUInt32BE(20_000, 20);
  await assert.rejects(prepareImage(header, "huge.png"), /huge\.png \(20000x20000, .*\) has over 50 million pixels/);
});
