export * from './project-root';
