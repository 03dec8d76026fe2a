// Entry point for asc, which resolves a package import to PACKAGE/index.ts.
export * from "./assembly/index";
