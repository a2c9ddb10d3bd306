// marked-terminal ships no types; @types/marked-terminal pulls an old marked. Only what Keen uses.
declare module "marked-terminal" {
  import type { MarkedExtension } from "marked";
  type Style = (text: string) => string;
  export interface MarkedTerminalOptions {
    code?: Style; blockquote?: Style; html?: Style; heading?: Style; firstHeading?: Style; hr?: Style;
    listitem?: Style; table?: Style; paragraph?: Style; strong?: Style; em?: Style; codespan?: Style;
    del?: Style; link?: Style; href?: Style; text?: Style;
    unescape?: boolean; emoji?: boolean; width?: number; showSectionPrefix?: boolean; reflowText?: boolean; tab?: number;
    tableOptions?: Record<string, unknown>;
  }
  export function markedTerminal(options?: MarkedTerminalOptions, highlightOptions?: Record<string, unknown>): MarkedExtension;
}
