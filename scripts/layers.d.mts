// Types of scripts/layers.mjs, for test/layers.test.ts.
export interface Floor { readonly name: string; readonly paths: readonly string[] }
export declare const FLOORS: readonly Floor[];
export declare const ROOT_FILES: readonly string[];
/** The layer check of the repository at `root`: each upward import or unlayered root file, and the files read. */
export declare function checkLayers(root: string): Promise<{ problems: string[]; files: number }>;
