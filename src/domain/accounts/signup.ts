/** Who may make an account on the dashboard (NETDIAG_SIGNUP): anyone, the invited, or no one. */
export const SIGNUP_MODES = ['open', 'invite', 'closed'] as const;
export type SignupMode = (typeof SIGNUP_MODES)[number];
