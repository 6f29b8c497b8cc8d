/**
 * The one rule for enumerations: a value is accepted in any case and answered in its
 * canonical spelling. Used by the HTTP validator (bodies and query strings), the account service
 * and through it the command line, so "WEB", "CSV", "Free" and "mx" all mean the same thing.
 */
export function canonicalOf<T extends string>(allowed: readonly T[], input: string): T | undefined {
  if ((allowed as readonly string[]).includes(input)) return input as T;
  // Surrounding spaces are forgiven too, as the DNS type always was (" mx ").
  const folded = input.trim().toLowerCase();
  return allowed.find((value) => value.toLowerCase() === folded);
}
