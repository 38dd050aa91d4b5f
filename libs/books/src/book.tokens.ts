/** Injection token of the BookLimits (libs/config) ingestion runs under. */
export const BOOK_LIMITS = 'BOOK_LIMITS';

/** Injection token of the BookEmbeddings (null when no embeddings provider is configured). */
export const BOOK_EMBEDDINGS = 'BOOK_EMBEDDINGS';

/** Injection token of the BookContexts (null unless contextual retrieval is on). */
export const BOOK_CONTEXTS = 'BOOK_CONTEXTS';
