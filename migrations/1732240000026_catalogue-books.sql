-- Up Migration

-- A book is a reader's own ('private', every book written before this release) or one of a
-- tenant's catalogue ('catalogue'), published once by a publisher and read by every reader of
-- its tenant. tenant: the catalogue's tenant (the publisher token's parley_tenant claim), '' for
-- the deployment's own catalogue; NULL for a private book.
ALTER TABLE books
  ADD COLUMN visibility text NOT NULL DEFAULT 'private' CHECK (visibility IN ('private', 'catalogue')),
  ADD COLUMN tenant text,
  ADD CONSTRAINT books_catalogue_tenant CHECK ((visibility = 'catalogue') = (tenant IS NOT NULL));

-- A tenant's catalogue, newest first: GET /v1/books pages through it with a keyset cursor.
CREATE INDEX books_catalogue ON books (tenant, created_at DESC, id DESC) WHERE visibility = 'catalogue';

-- Down Migration
DROP INDEX books_catalogue;
ALTER TABLE books DROP CONSTRAINT books_catalogue_tenant, DROP COLUMN tenant, DROP COLUMN visibility;
