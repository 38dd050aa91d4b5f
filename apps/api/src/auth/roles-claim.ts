/** The claim with which an identity provider (or `npm run cli -- token`) gives a user roles: an array of strings. */
export const ROLES_CLAIM = 'parley_roles';

/** The role that opens the operators' queue board (QUEUE_BOARD_PATH; docs/security.md, "Operators"). */
export const OPERATOR_ROLE = 'operator';

/** The role that may publish books to its tenant's catalogue, rename and withdraw them (docs/books.md, "The catalogue"). */
export const PUBLISHER_ROLE = 'publisher';

/**
 * The role of a tenant's operator: its readers' usage and budgets, for the tenant the token's
 * parley_tenant names (an admin token without a tenant is refused: docs/operations.md).
 */
export const ADMIN_ROLE = 'admin';

/**
 * The roles a token's payload names. Anything but an array of strings names none: roles only add
 * rights, so a claim that cannot be read grants nothing (unlike a budget, whose fallback would be looser).
 */
export function rolesClaim(payload: Record<string, unknown>): string[] {
  const value = payload[ROLES_CLAIM];
  return Array.isArray(value) && value.every((r) => typeof r === 'string') ? value : [];
}
