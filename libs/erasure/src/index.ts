export * from './conversation-eraser';
export * from './erased-jobs';
export * from './erasure-journal';
export * from './erasure.repository';
export * from './erasures';
export * from './erasure.module';
export * from './journal-database';
export * from './open-erasure-journal';
