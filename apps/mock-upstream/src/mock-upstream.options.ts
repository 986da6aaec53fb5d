/** The accounts configured at start-up, to which `/_mock/reset` returns. */
export const INITIAL_ACCOUNTS = Symbol('INITIAL_ACCOUNTS');
