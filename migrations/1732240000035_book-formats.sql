-- Up Migration

-- Books may be uploaded as EPUB, HTML and Word (.docx) as well.
ALTER TABLE books DROP CONSTRAINT books_format_check;
ALTER TABLE books ADD CONSTRAINT books_format_check
  CHECK (format IN ('text', 'markdown', 'pdf', 'epub', 'html', 'docx'));

-- Whether the uploader chose the title (false: it is the file's name), so the title the book
-- states (an EPUB's metadata) replaces it once parsed. Kept with the upload, which goes once the
-- book is ready or failed; uploads of the release before keep their titles.
ALTER TABLE book_uploads ADD COLUMN title_given boolean NOT NULL DEFAULT true;

-- Down Migration
ALTER TABLE book_uploads DROP COLUMN title_given;
ALTER TABLE books DROP CONSTRAINT books_format_check;
ALTER TABLE books ADD CONSTRAINT books_format_check CHECK (format IN ('text', 'markdown', 'pdf')) NOT VALID;
