import { closeSync } from "node:fs";
import { resolve } from "node:path";
import type { PromptImage } from "../../protocol/commands.js";
import type { ContentBlock } from "../../protocol/messages.js";
import type { FileGuard } from "../permissions/guard.js";
import { openGuarded, readAll } from "../permissions/guarded-open.js";
import { ImageError, MAX_IMAGE_FILE_BYTES, prepareImage, type PreparedImage } from "./image.js";

/** At most this many images per prompt: each one rides along with every later request of the session. */
export const MAX_PROMPT_IMAGES = 10;


/** Reads an image file through the session's filesystem guard (secret files and other refused paths stay refused). */
export type ImageReader = (path: string) => Promise<PreparedImage>;

/** The reader for one session: `path` resolved against `cwd`, opened through `guard`. Contract: throws ImageError. */
export function createImageReader(guard: FileGuard, cwd: string): ImageReader {
  return async (path) => {
    const file = openGuarded(guard, resolve(cwd, path), "read");
    if (!file.ok) {
      if (file.kind === "missing") throw new ImageError(`image not found: ${path}`);
      if (file.kind === "directory" || file.kind === "not-file") throw new ImageError(`${path} is not a file`);
      throw new ImageError(file.reason);
    }
    let bytes: Buffer;
    try {
      if (file.stat.size > MAX_IMAGE_FILE_BYTES) throw new ImageError(`${path} is over ${MAX_IMAGE_FILE_BYTES / 1024 / 1024} MB`);
      bytes = readAll(file.fd, MAX_IMAGE_FILE_BYTES);
    } finally {
      closeSync(file.fd);
    }
    return prepareImage(bytes, path);
  };
}

/**
 * A prompt's images as message blocks, each checked and within the caps (app/tools/image.ts).
 * Contract: throws ImageError naming the first image that cannot be sent; `read` absent: paths are refused.
 */
export async function promptImageBlocks(images: PromptImage[], read: ImageReader | undefined): Promise<ContentBlock[]> {
  if (images.length > MAX_PROMPT_IMAGES) throw new ImageError(`${images.length} images; a prompt carries at most ${MAX_PROMPT_IMAGES}`);
  const blocks: ContentBlock[] = [];
  for (const [i, image] of images.entries()) {
    let prepared: PreparedImage;
    let name: string;
    if ("path" in image) {
      if (!read) throw new ImageError(`image ${image.path}: this session cannot read image files`);
      name = image.path;
      prepared = await read(image.path);
    } else {
      name = `image ${i + 1}`;
      const bytes = Buffer.from(image.data, "base64");
      if (bytes.length === 0) throw new ImageError(`${name}: data is empty or not base64`);
      prepared = await prepareImage(bytes, name, image.media_type);
    }
    blocks.push({ type: "image", media_type: prepared.media_type, data: prepared.data, name });
  }
  return blocks;
}
