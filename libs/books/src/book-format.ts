import path from 'node:path';
import { BookFormat } from './book.types';

/** The format a file's name (or, failing that, its content type) says it has; null when neither tells. */
export function formatOfFile(fileName: string, mimeType = ''): BookFormat | null {
  const ext = path.extname(fileName).toLowerCase();
  if (ext === '.txt' || ext === '.text') return 'text';
  if (ext === '.md' || ext === '.markdown') return 'markdown';
  if (ext === '.pdf') return 'pdf';
  if (ext === '.epub') return 'epub';
  if (ext === '.html' || ext === '.htm' || ext === '.xhtml') return 'html';
  if (ext === '.docx') return 'docx';
  const type = mimeType.split(';')[0].trim().toLowerCase();
  if (type === 'application/pdf') return 'pdf';
  if (type === 'application/epub+zip') return 'epub';
  if (type === 'text/html' || type === 'application/xhtml+xml') return 'html';
  if (type === 'application/vnd.openxmlformats-officedocument.wordprocessingml.document') return 'docx';
  if (type === 'text/markdown' || type === 'text/x-markdown') return 'markdown';
  if (type === 'text/plain') return 'text';
  return null;
}

/** A title from a file name: "pride_and_prejudice.txt" → "pride_and_prejudice". */
export function titleOfFile(fileName: string): string {
  return path.basename(fileName, path.extname(fileName)).trim().slice(0, 200) || 'Untitled';
}
