// blessed's own files, loaded one by one (app/tui/blessed-core.ts types what it takes from them).
declare module "blessed/lib/*";
