export * from './book.types';
export * from './book.errors';
export * from './book-format';
export * from './books.repository';
export * from './books.service';
export * from './books.module';
export * from './search-book.tool';
