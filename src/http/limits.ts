/** Bodies over 1 MiB are refused with 413 before they are parsed. */
export const BODY_LIMIT_BYTES = 1024 * 1024;
