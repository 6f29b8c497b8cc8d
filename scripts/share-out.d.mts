/** See share-out.mjs. */
export function shareOut(files: readonly string[], count: number, ms: Readonly<Record<string, number>> | null): string[][];
