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
   * (a conversation's own sources, each checked visible to its reader when it was added)
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
 * The reader of a conversation searching its own sources: each book was checked visible to
 * them when it joined the conversation, so a catalogue book among them reads whatever the tenant.
 */
export function sourcesReader(id: string): BookReader {
  return { id, catalogue: null };
}
