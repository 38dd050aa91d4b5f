/** The catalogue of a deployment's readers whose tokens name no tenant (no `parley_tenant` claim). */
export const DEPLOYMENT_CATALOGUE = '';

/**
 * Who asks for a book, and so which books they may see: their own private books and the
 * catalogue of their tenant. A book they may not see is one that does not exist (404).
 */
export interface BookReader {
  /** the token's `sub` */
  id: string;
  /**
   * the catalogue they see: their tenant, DEPLOYMENT_CATALOGUE without one; null: any catalogue
   * (a turn posted before 0.4, which recorded no catalogue: its books were each checked visible
   * to its reader when they joined the conversation)
   */
  catalogue: string | null;
}

/** A reader of one tenant's catalogue: one a token names. */
export type TenantReader = BookReader & { catalogue: string };

/** A reader as their token names them: `sub` and the `parley_tenant` claim, if any. */
export function readerOf(id: string, tenant?: string): TenantReader {
  return { id, catalogue: tenant ?? DEPLOYMENT_CATALOGUE };
}

/**
 * The reader of a turn, as the post recorded them: the conversation's owner and the catalogue
 * their token named when they asked. Each use of a book asks again whether this reader may read
 * it, so a reader who left a tenant reads none of its books through an old conversation.
 */
export function turnReader(turn: { userId: string; catalogue: string | null }): BookReader {
  return { id: turn.userId, catalogue: turn.catalogue };
}
