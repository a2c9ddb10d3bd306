/**
 * Grapheme clusters (a flag, a skin-toned or ZWJ emoji, e + combining accent are one each) of text.
 *
 * The first `Intl.Segmenter` of a process loads ICU's break-iterator data: ~13 ms on the 2-core machine, in the
 * TUI's first frame when made at load. Text made only of the characters below needs none: none of them joins
 * its neighbour in a cluster (Unicode's grapheme rules join only across CR LF, Extend, ZWJ, SpacingMark,
 * Prepend, Hangul jamo and regional indicators, and this set holds none of those), so each is a cluster of
 * its own. Latin letters with their precomposed accents, punctuation, arrows, box drawing, shapes and
 * dingbats are here; combining marks (from U+0300), format characters and everything else go to ICU.
 */
const SINGLES = /^[\x20-\x7e\xa0-\u02ff\u2010-\u2027\u2030-\u205e\u2190-\u23ff\u2500-\u27bf]*$/;

let segmenter: Intl.Segmenter | undefined;

/** The clusters of `text`, in order, each with its start offset. */
export function graphemes(text: string): Array<{ segment: string; index: number }> {
  if (SINGLES.test(text)) return Array.from(text, (segment, index) => ({ segment, index }));
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return Array.from(segmenter.segment(text), ({ segment, index }) => ({ segment, index }));
}
