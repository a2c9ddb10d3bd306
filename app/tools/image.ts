import { extname } from "node:path";
import { CodedError } from "../../protocol/errors.js";
import { IMAGE_MEDIA_TYPES } from "../../protocol/media.js";
import type { ImageMediaType } from "../../protocol/messages.js";

/**
 * Images Keen sends to a model: the prompt's (`images` on the `prompt` command, the TUI's
 * `@image.png`, ACP image blocks) and read_file's. Each is checked to be what it says it is
 * (png, jpeg, gif or webp, by its bytes) and kept within caps every provider accepts:
 * longest side MAX_IMAGE_EDGE pixels, MAX_IMAGE_BYTES bytes. A larger one is downscaled with
 * jimp (pure JavaScript, loaded only then); one that cannot be brought within the caps is
 * refused with a message that says why.
 */

/** Longest side sent: Anthropic scales anything larger down to this itself, so more only costs bytes and time. */
export const MAX_IMAGE_EDGE = 1568;
/** Bytes of one image sent: Anthropic refuses images over 5 MB of base64, which is this many bytes. */
export const MAX_IMAGE_BYTES = 3_750_000;
/** Files larger than this are not read at all. */
export const MAX_IMAGE_FILE_BYTES = 20 * 1024 * 1024;
/** Decoding allocates four bytes a pixel: larger images (or decompression bombs) are refused, not decoded. */
export const MAX_IMAGE_PIXELS = 50_000_000;

const BY_EXTENSION: Record<string, ImageMediaType> = {
  ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp",
};
// image-size's names for the four types.
const BY_SNIFFED: Record<string, ImageMediaType> = { png: "image/png", jpg: "image/jpeg", gif: "image/gif", webp: "image/webp" };

/** An image ready for a model: within the caps, its type checked. */
export interface PreparedImage {
  media_type: ImageMediaType;
  /** Base64. */
  data: string;
  width: number;
  height: number;
  bytes: number;
  /** The original size when it was downscaled. */
  resized_from?: { width: number; height: number; bytes: number };
}

/** Why an image was refused, worded for a person or the model; a refused prompt answers with its code. */
export class ImageError extends CodedError {
  constructor(message: string) {
    super(message, "bad_image");
  }
}

/** The media type a file name says an image has (png, jpg/jpeg, gif, webp), if any. */
export function imageTypeOfPath(path: string): ImageMediaType | undefined {
  return BY_EXTENSION[extname(path).toLowerCase()];
}

/** True for one of the image types Keen sends. */
export function isImageMediaType(type: string): type is ImageMediaType {
  return (IMAGE_MEDIA_TYPES as readonly string[]).includes(type);
}

/**
 * `bytes` as an image for a model, downscaled when over the caps. `what` names it in messages.
 * Contract: throws ImageError (only) when the bytes are not a png/jpeg/gif/webp image, are not
 * the declared type, or cannot be brought within the caps.
 */
export async function prepareImage(bytes: Buffer, what: string, declared?: string): Promise<PreparedImage> {
  if (bytes.length > MAX_IMAGE_FILE_BYTES) throw new ImageError(`${what} is ${mb(bytes.length)}; images over ${mb(MAX_IMAGE_FILE_BYTES)} are refused`);
  const { imageSize } = await import("image-size");
  let size: { width?: number; height?: number; type?: string };
  try {
    size = imageSize(bytes);
  } catch {
    throw new ImageError(`${what} is not an image Keen can send (png, jpeg, gif or webp)`);
  }
  const type = BY_SNIFFED[size.type ?? ""];
  if (!type) throw new ImageError(`${what} is a ${size.type ?? "unknown"} image; Keen sends png, jpeg, gif and webp`);
  if (declared !== undefined && declared !== type) throw new ImageError(`${what} is declared ${declared} but its bytes are ${type}`);
  const width = size.width ?? 0;
  const height = size.height ?? 0;
  if (width < 1 || height < 1) throw new ImageError(`${what} has no size in its header`);
  if (bytes.length <= MAX_IMAGE_BYTES && Math.max(width, height) <= MAX_IMAGE_EDGE) {
    return { media_type: type, data: bytes.toString("base64"), width, height, bytes: bytes.length };
  }
  return downscale(bytes, what, type, { width, height, bytes: bytes.length });
}

async function downscale(bytes: Buffer, what: string, type: ImageMediaType, from: { width: number; height: number; bytes: number }): Promise<PreparedImage> {
  const size = `${from.width}x${from.height}, ${mb(from.bytes)}`;
  if (type === "image/webp") {
    throw new ImageError(`${what} (${size}) is over Keen's caps (${MAX_IMAGE_EDGE} pixels a side, ${mb(MAX_IMAGE_BYTES)}) and WebP cannot be downscaled here; convert it to png or jpeg`);
  }
  if (from.width * from.height > MAX_IMAGE_PIXELS) {
    throw new ImageError(`${what} (${size}) has over ${MAX_IMAGE_PIXELS / 1_000_000} million pixels; Keen does not decode images that large`);
  }
  const { Jimp, ResizeStrategy } = await import("jimp");
  let image: Awaited<ReturnType<typeof Jimp.read>>;
  try {
    image = await Jimp.read(bytes);
  } catch (error) {
    throw new ImageError(`${what} could not be decoded: ${error instanceof Error ? error.message : String(error)}`);
  }
  // Bilinear: a third of the time of jimp's default (bicubic) in pure JavaScript, and fine for one downscale step.
  if (Math.max(image.width, image.height) > MAX_IMAGE_EDGE) image.scaleToFit({ w: MAX_IMAGE_EDGE, h: MAX_IMAGE_EDGE, mode: ResizeStrategy.BILINEAR });
  // Photographs stay jpeg; screenshots and diagrams stay lossless (a gif's first frame becomes a png) unless too big.
  let out: Buffer = type === "image/jpeg" ? await image.getBuffer("image/jpeg", { quality: 85 }) : await image.getBuffer("image/png");
  let media: ImageMediaType = type === "image/jpeg" ? "image/jpeg" : "image/png";
  for (const quality of [85, 70, 50]) {
    if (out.length <= MAX_IMAGE_BYTES) break;
    out = await image.getBuffer("image/jpeg", { quality });
    media = "image/jpeg";
  }
  if (out.length > MAX_IMAGE_BYTES) throw new ImageError(`${what} (${size}) is still ${mb(out.length)} after downscaling; the cap is ${mb(MAX_IMAGE_BYTES)}`);
  return { media_type: media, data: out.toString("base64"), width: image.width, height: image.height, bytes: out.length, resized_from: from };
}

/** One line about an image, for the model and for people: `photo.png (png, 800x600, 41 KB; downscaled from 4000x3000)`. */
export function describeImage(name: string, image: PreparedImage): string {
  const from = image.resized_from ? `; downscaled from ${image.resized_from.width}x${image.resized_from.height}` : "";
  return `${name} (${image.media_type.slice(6)}, ${image.width}x${image.height}, ${kb(image.bytes)}${from})`;
}

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`;
const kb = (n: number) => (n < 1024 ? `${n} bytes` : `${Math.round(n / 1024)} KB`);
