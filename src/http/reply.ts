/** The success envelope. */
export function ok<T>(data: T, message: string): { success: true; data: T; message: string } {
  return { success: true, data, message };
}
